/* Bubble sort of 4 signed words (a tie included). */
int a[4] = {19, -7, -300, 19};
int main(void) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3 - i; j++)
            if (a[j] > a[j + 1]) { int t = a[j]; a[j] = a[j + 1]; a[j + 1] = t; }
    return 0;
}
