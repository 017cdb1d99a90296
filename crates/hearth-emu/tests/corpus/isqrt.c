/* Integer square root by the digit-by-digit method. */
unsigned n = 1000000007u, root;
int main(void) {
    unsigned x = n, r = 0, bit = 1u << 30;
    while (bit > x) bit >>= 2;
    while (bit != 0) {
        if (x >= r + bit) { x -= r + bit; r = (r >> 1) + bit; }
        else r >>= 1;
        bit >>= 2;
    }
    root = r;
    return 0;
}
