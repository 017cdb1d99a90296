/* CRC-8 (polynomial 0x07) of a short message. */
unsigned char msg[8] = {'h', 'e', 'a', 'r', 't', 'h', '!', 0x5a};
unsigned char crc;
int main(void) {
    unsigned c = 0;
    for (int i = 0; i < 8; i++) {
        c ^= msg[i];
        for (int k = 0; k < 8; k++) c = (c & 0x80) ? ((c << 1) ^ 0x07) & 0xff : (c << 1) & 0xff;
    }
    crc = (unsigned char)c;
    return 0;
}
