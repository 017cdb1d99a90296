/* A function of two pointers: dot4(a, b) sums a[i] * b[i]. Its arguments
   come in r0 and r1 (call.s): from --clear-reg r0=@a --clear-reg r1=@b in
   the emulator, set by call.s's qemu_start under qemu. */
int a[4] = {3, -1, 4, 1000};
int b[4] = {-2, 7, 5, 123456};
int result;

int dot4(const int *x, const int *y) {
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += x[i] * y[i];
    return s;
}
