/* A Q16.16 fixed-point polynomial by Horner's rule, at a few points. */
int coef[4] = {3 << 16, -(1 << 15), 5 << 12, -(7 << 10)};
int xs[3] = {1 << 16, -(3 << 15), 5 << 14};
int ys[3];
static int qmul(int a, int b) { return (int)(((long long)a * b) >> 16); }
int main(void) {
    for (int k = 0; k < 3; k++) {
        int y = coef[3];
        for (int i = 2; i >= 0; i--) y = qmul(y, xs[k]) + coef[i];
        ys[k] = y;
    }
    return 0;
}
