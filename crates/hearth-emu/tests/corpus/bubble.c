/* Bubble sort of 5 signed words (a tie included). */
int a[5] = {19, -7, 1000, -300, 19};
int main(void) {
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4 - i; j++)
            if (a[j] > a[j + 1]) { int t = a[j]; a[j] = a[j + 1]; a[j + 1] = t; }
    return 0;
}
