/* Bubble sort of 8 signed words. */
int a[8] = {42, -7, 19, 0, 1000, -300, 5, 19};
int main(void) {
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7 - i; j++)
            if (a[j] > a[j + 1]) { int t = a[j]; a[j] = a[j + 1]; a[j + 1] = t; }
    return 0;
}
