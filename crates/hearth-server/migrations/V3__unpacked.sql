-- Whether a job's result is kept with every ciphertext in full (posted
-- with `?unpacked=true`, for later jobs' `?with=`); otherwise its result
-- blob is packed where its outputs allow. Rows from before: packed.
ALTER TABLE jobs ADD COLUMN unpacked BOOLEAN NOT NULL DEFAULT FALSE;
