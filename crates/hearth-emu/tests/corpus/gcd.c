unsigned a = 1071, b = 462, g;
int main(void) {
    unsigned x = a, y = b;
    while (y != 0) { unsigned t = x % y; x = y; y = t; }
    g = x;
    return 0;
}
