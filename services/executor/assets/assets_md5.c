/* assets_md5 — MD5 after RFC 1321. */
#include "assets_md5.h"

#include <stdio.h>
#include <string.h>

static const uint32_t s_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391 };
static const uint8_t s_r[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21 };

static void s_block (bmq_assets_md5_t *m, const uint8_t *b)
{
    uint32_t w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t) b[i * 4] | (uint32_t) b[i * 4 + 1] << 8 | (uint32_t) b[i * 4 + 2] << 16 | (uint32_t) b[i * 4 + 3] << 24;
    uint32_t a = m->state[0], bb = m->state[1], c = m->state[2], d = m->state[3];
    for (int i = 0; i < 64; i++) {
        uint32_t f;
        int g;
        if (i < 16)      { f = (bb & c) | (~bb & d); g = i; }
        else if (i < 32) { f = (d & bb) | (~d & c); g = (5 * i + 1) % 16; }
        else if (i < 48) { f = bb ^ c ^ d;          g = (3 * i + 5) % 16; }
        else             { f = c ^ (bb | ~d);       g = (7 * i) % 16; }
        uint32_t t = d;
        d = c;
        c = bb;
        uint32_t x = a + f + s_k[i] + w[g];
        bb = bb + (x << s_r[i] | x >> (32 - s_r[i]));
        a = t;
    }
    m->state[0] += a; m->state[1] += bb; m->state[2] += c; m->state[3] += d;
}

void bmq_assets_md5_init (bmq_assets_md5_t *m)
{
    memset (m, 0, sizeof *m);
    m->state[0] = 0x67452301; m->state[1] = 0xefcdab89; m->state[2] = 0x98badcfe; m->state[3] = 0x10325476;
}

void bmq_assets_md5_update (bmq_assets_md5_t *m, const void *data, size_t len)
{
    const uint8_t *p = data;
    m->bytes += len;
    while (len) {
        size_t k = 64 - m->fill < len ? 64 - m->fill : len;
        memcpy (m->block + m->fill, p, k);
        m->fill += k;
        p += k;
        len -= k;
        if (m->fill == 64) { s_block (m, m->block); m->fill = 0; }
    }
}

void bmq_assets_md5_hex (bmq_assets_md5_t *m, char out[33])
{
    uint64_t bits = m->bytes * 8;
    uint8_t pad = 0x80, zero = 0, lenb[8];
    bmq_assets_md5_update (m, &pad, 1);
    while (m->fill != 56) bmq_assets_md5_update (m, &zero, 1);
    for (int i = 0; i < 8; i++) lenb[i] = (uint8_t) (bits >> (8 * i));
    bmq_assets_md5_update (m, lenb, 8);
    for (int i = 0; i < 16; i++) sprintf (out + i * 2, "%02x", (unsigned) (m->state[i / 4] >> (8 * (i % 4))) & 0xff);
    out[32] = 0;
}
