//! Where a fleet keeps its large objects: server keys as uploaded, job
//! requests (a program file and a bundle), results. The database holds
//! only their names; every server reads and writes the same objects.
//!
//! [`Folder`] is a folder every server mounts (NFS in production, one
//! local folder in tests). An object store would plug in as another
//! [`BlobStore`]: `put` and `put_file` upload (a staged file as a
//! multipart upload), `get` downloads, `local` downloads into a local
//! cache file that a result is streamed from, `delete` deletes, `list`
//! lists a prefix with the objects' times (for the hourly sweep of
//! objects no row names), and `free_bytes` is `None` (no disk to keep
//! free). Names are fresh for
//! every object written (a key's has a random part, a result's its
//! lease's fence), so no object is ever overwritten while another server
//! may read it, and a store without atomic renames is enough.

use std::io;
use std::path::{Path, PathBuf};

use hearth::crypto::files::{remove_durable, write_atomic};

/// A store of named objects, each written whole or not at all.
pub trait BlobStore: Send + Sync + std::fmt::Debug {
    /// Writes `bytes` as `name`.
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()>;
    /// Writes the object `name` with `write`, which writes a whole file
    /// at the path it is given (atomically, as
    /// [`hearth::Bundle::save_len`] does) and returns its length.
    fn put_file(
        &self,
        name: &str,
        write: &mut dyn FnMut(&Path) -> io::Result<u64>,
    ) -> io::Result<u64>;
    /// The object `name`.
    fn get(&self, name: &str) -> io::Result<Vec<u8>>;
    /// A local file holding the object `name`, to stream it from.
    fn local(&self, name: &str) -> io::Result<PathBuf>;
    /// Removes the object `name`; `Ok` if it was not there.
    fn delete(&self, name: &str) -> io::Result<()>;
    /// Every object under the folder `prefix` (partial writes included),
    /// with when it was last written.
    fn list(&self, prefix: &str) -> io::Result<Vec<(String, std::time::SystemTime)>>;
    /// Free bytes where objects are written (`None`: not known, or no
    /// disk to keep free).
    fn free_bytes(&self) -> Option<u64>;
}

/// Objects as files in a folder every server mounts.
#[derive(Debug)]
pub struct Folder {
    root: PathBuf,
}

impl Folder {
    /// The folder `root`, created if missing.
    pub fn open(root: &Path) -> io::Result<Folder> {
        std::fs::create_dir_all(root)?;
        Ok(Folder {
            root: root.to_path_buf(),
        })
    }

    /// Where `name` is: names are made by the fleet (`keys/TENANT/...`,
    /// `jobs/ID.req`, `results/ID.FENCE.out`), never by a client, but one
    /// that would leave the folder is refused all the same.
    fn path(&self, name: &str) -> io::Result<PathBuf> {
        let ok = !name.is_empty()
            && name.split('/').all(|part| {
                !part.is_empty()
                    && part != ".."
                    && part != "."
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            });
        if !ok {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name:?} is not a blob name"),
            ));
        }
        Ok(self.root.join(name))
    }

    /// `name`'s path, its folder created.
    fn path_for_write(&self, name: &str) -> io::Result<PathBuf> {
        let path = self.path(name)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(path)
    }
}

impl BlobStore for Folder {
    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.path_for_write(name)?;
        write_atomic(&path, bytes, false).map_err(io::Error::other)
    }

    fn put_file(
        &self,
        name: &str,
        write: &mut dyn FnMut(&Path) -> io::Result<u64>,
    ) -> io::Result<u64> {
        let path = self.path_for_write(name)?;
        write(&path)
    }

    fn get(&self, name: &str) -> io::Result<Vec<u8>> {
        std::fs::read(self.path(name)?)
    }

    fn local(&self, name: &str) -> io::Result<PathBuf> {
        self.path(name)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        remove_durable(&self.path(name)?).map(|_| ())
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<(String, std::time::SystemTime)>> {
        let mut out = Vec::new();
        let mut folders = vec![(self.path(prefix)?, prefix.to_string())];
        while let Some((dir, name)) = folders.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for entry in entries {
                let entry = entry?;
                let Ok(file) = entry.file_name().into_string() else {
                    continue;
                };
                let meta = entry.metadata()?;
                let child = format!("{name}/{file}");
                if meta.is_dir() {
                    folders.push((entry.path(), child));
                } else {
                    out.push((child, meta.modified()?));
                }
            }
        }
        Ok(out)
    }

    fn free_bytes(&self) -> Option<u64> {
        crate::server::free_bytes(&self.root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_round_trip_and_names_stay_inside() {
        let root = std::env::temp_dir().join(format!("hearth-blobs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let f = Folder::open(&root).unwrap();
        f.put("keys/alice/0000000000000001-ab.key", b"key").unwrap();
        assert_eq!(f.get("keys/alice/0000000000000001-ab.key").unwrap(), b"key");
        let n = f
            .put_file("results/x.1.out", &mut |p| {
                std::fs::write(p, b"12345")?;
                Ok(5)
            })
            .unwrap();
        assert_eq!(n, 5);
        assert_eq!(
            std::fs::read(f.local("results/x.1.out").unwrap()).unwrap(),
            b"12345"
        );
        f.delete("results/x.1.out").unwrap();
        f.delete("results/x.1.out").unwrap();
        assert!(f.get("results/x.1.out").is_err());
        for bad in [
            "",
            "../x",
            "a/../../x",
            "/etc/passwd",
            "a//b",
            "a/./b",
            "a b",
        ] {
            assert!(f.put(bad, b"x").is_err(), "{bad:?}");
            assert!(f.get(bad).is_err(), "{bad:?}");
        }
        assert!(f.free_bytes().is_some());
        let mut listed: Vec<String> = f
            .list("keys")
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        listed.sort();
        assert_eq!(listed, ["keys/alice/0000000000000001-ab.key"]);
        assert!(f.list("results").unwrap().is_empty());
        assert!(f.list("none").unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }
}
