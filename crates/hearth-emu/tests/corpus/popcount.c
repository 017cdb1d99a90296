/* Population count of a few words, the classic SWAR way and bit by bit. */
unsigned words[4] = {0xdeadbeefu, 0x00000000u, 0xffffffffu, 0x80000001u};
unsigned swar[4], loop[4];
int main(void) {
    for (int i = 0; i < 4; i++) {
        unsigned v = words[i];
        v = v - ((v >> 1) & 0x55555555u);
        v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
        swar[i] = (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
        unsigned c = 0, w = words[i];
        for (int k = 0; k < 32; k++) c += (w >> k) & 1u;
        loop[i] = c;
    }
    return 0;
}
