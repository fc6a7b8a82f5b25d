/**
 * @file md5.h
 * @brief MD5 message digest (RFC 1321), written for this project from the RFC.
 *
 * The functions are `static inline` and, under nvcc, `__host__ __device__`: the CPU
 * versions and the CUDA kernel share this one implementation.
 */
#ifndef APP_MD5_H
#define APP_MD5_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MD5_FN static inline __host__ __device__
#else
#define MD5_FN static inline
#endif

/** Bytes of a digest. */
#define MD5_DIGEST_BYTES 16

MD5_FN uint32_t md5_rotl(uint32_t x, unsigned c)
{
    return (x << c) | (x >> (32u - c));
}

MD5_FN uint32_t md5_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The four auxiliary functions of RFC 1321 section 3.4 and one step of each round. */
#define MD5_F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define MD5_G(x, y, z) (((x) & (z)) | ((y) & ~(z)))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(f, a, b, c, d, xk, s, t) ((a) = (b) + md5_rotl((a) + f((b), (c), (d)) + (xk) + (t), (s)))

/** @brief Process one 64-byte block into the state (RFC 1321 section 3.4). */
MD5_FN void md5_compress(uint32_t st[4], const uint8_t block[64])
{
    uint32_t x[16];
    for (int k = 0; k < 16; k++)
        x[k] = md5_load_le32(block + 4 * k);
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3];

    /* Round 1: T[i] = floor(2^32 * |sin(i)|), i = 1..16 */
    MD5_STEP(MD5_F, a, b, c, d, x[0], 7, 0xd76aa478u);
    MD5_STEP(MD5_F, d, a, b, c, x[1], 12, 0xe8c7b756u);
    MD5_STEP(MD5_F, c, d, a, b, x[2], 17, 0x242070dbu);
    MD5_STEP(MD5_F, b, c, d, a, x[3], 22, 0xc1bdceeeu);
    MD5_STEP(MD5_F, a, b, c, d, x[4], 7, 0xf57c0fafu);
    MD5_STEP(MD5_F, d, a, b, c, x[5], 12, 0x4787c62au);
    MD5_STEP(MD5_F, c, d, a, b, x[6], 17, 0xa8304613u);
    MD5_STEP(MD5_F, b, c, d, a, x[7], 22, 0xfd469501u);
    MD5_STEP(MD5_F, a, b, c, d, x[8], 7, 0x698098d8u);
    MD5_STEP(MD5_F, d, a, b, c, x[9], 12, 0x8b44f7afu);
    MD5_STEP(MD5_F, c, d, a, b, x[10], 17, 0xffff5bb1u);
    MD5_STEP(MD5_F, b, c, d, a, x[11], 22, 0x895cd7beu);
    MD5_STEP(MD5_F, a, b, c, d, x[12], 7, 0x6b901122u);
    MD5_STEP(MD5_F, d, a, b, c, x[13], 12, 0xfd987193u);
    MD5_STEP(MD5_F, c, d, a, b, x[14], 17, 0xa679438eu);
    MD5_STEP(MD5_F, b, c, d, a, x[15], 22, 0x49b40821u);

    /* Round 2: message words 1, 6, 11, ... (5k + 1 mod 16) */
    MD5_STEP(MD5_G, a, b, c, d, x[1], 5, 0xf61e2562u);
    MD5_STEP(MD5_G, d, a, b, c, x[6], 9, 0xc040b340u);
    MD5_STEP(MD5_G, c, d, a, b, x[11], 14, 0x265e5a51u);
    MD5_STEP(MD5_G, b, c, d, a, x[0], 20, 0xe9b6c7aau);
    MD5_STEP(MD5_G, a, b, c, d, x[5], 5, 0xd62f105du);
    MD5_STEP(MD5_G, d, a, b, c, x[10], 9, 0x02441453u);
    MD5_STEP(MD5_G, c, d, a, b, x[15], 14, 0xd8a1e681u);
    MD5_STEP(MD5_G, b, c, d, a, x[4], 20, 0xe7d3fbc8u);
    MD5_STEP(MD5_G, a, b, c, d, x[9], 5, 0x21e1cde6u);
    MD5_STEP(MD5_G, d, a, b, c, x[14], 9, 0xc33707d6u);
    MD5_STEP(MD5_G, c, d, a, b, x[3], 14, 0xf4d50d87u);
    MD5_STEP(MD5_G, b, c, d, a, x[8], 20, 0x455a14edu);
    MD5_STEP(MD5_G, a, b, c, d, x[13], 5, 0xa9e3e905u);
    MD5_STEP(MD5_G, d, a, b, c, x[2], 9, 0xfcefa3f8u);
    MD5_STEP(MD5_G, c, d, a, b, x[7], 14, 0x676f02d9u);
    MD5_STEP(MD5_G, b, c, d, a, x[12], 20, 0x8d2a4c8au);

    /* Round 3: message words 5, 8, 11, ... (3k + 5 mod 16) */
    MD5_STEP(MD5_H, a, b, c, d, x[5], 4, 0xfffa3942u);
    MD5_STEP(MD5_H, d, a, b, c, x[8], 11, 0x8771f681u);
    MD5_STEP(MD5_H, c, d, a, b, x[11], 16, 0x6d9d6122u);
    MD5_STEP(MD5_H, b, c, d, a, x[14], 23, 0xfde5380cu);
    MD5_STEP(MD5_H, a, b, c, d, x[1], 4, 0xa4beea44u);
    MD5_STEP(MD5_H, d, a, b, c, x[4], 11, 0x4bdecfa9u);
    MD5_STEP(MD5_H, c, d, a, b, x[7], 16, 0xf6bb4b60u);
    MD5_STEP(MD5_H, b, c, d, a, x[10], 23, 0xbebfbc70u);
    MD5_STEP(MD5_H, a, b, c, d, x[13], 4, 0x289b7ec6u);
    MD5_STEP(MD5_H, d, a, b, c, x[0], 11, 0xeaa127fau);
    MD5_STEP(MD5_H, c, d, a, b, x[3], 16, 0xd4ef3085u);
    MD5_STEP(MD5_H, b, c, d, a, x[6], 23, 0x04881d05u);
    MD5_STEP(MD5_H, a, b, c, d, x[9], 4, 0xd9d4d039u);
    MD5_STEP(MD5_H, d, a, b, c, x[12], 11, 0xe6db99e5u);
    MD5_STEP(MD5_H, c, d, a, b, x[15], 16, 0x1fa27cf8u);
    MD5_STEP(MD5_H, b, c, d, a, x[2], 23, 0xc4ac5665u);

    /* Round 4: message words 0, 7, 14, ... (7k mod 16) */
    MD5_STEP(MD5_I, a, b, c, d, x[0], 6, 0xf4292244u);
    MD5_STEP(MD5_I, d, a, b, c, x[7], 10, 0x432aff97u);
    MD5_STEP(MD5_I, c, d, a, b, x[14], 15, 0xab9423a7u);
    MD5_STEP(MD5_I, b, c, d, a, x[5], 21, 0xfc93a039u);
    MD5_STEP(MD5_I, a, b, c, d, x[12], 6, 0x655b59c3u);
    MD5_STEP(MD5_I, d, a, b, c, x[3], 10, 0x8f0ccc92u);
    MD5_STEP(MD5_I, c, d, a, b, x[10], 15, 0xffeff47du);
    MD5_STEP(MD5_I, b, c, d, a, x[1], 21, 0x85845dd1u);
    MD5_STEP(MD5_I, a, b, c, d, x[8], 6, 0x6fa87e4fu);
    MD5_STEP(MD5_I, d, a, b, c, x[15], 10, 0xfe2ce6e0u);
    MD5_STEP(MD5_I, c, d, a, b, x[6], 15, 0xa3014314u);
    MD5_STEP(MD5_I, b, c, d, a, x[13], 21, 0x4e0811a1u);
    MD5_STEP(MD5_I, a, b, c, d, x[4], 6, 0xf7537e82u);
    MD5_STEP(MD5_I, d, a, b, c, x[11], 10, 0xbd3af235u);
    MD5_STEP(MD5_I, c, d, a, b, x[2], 15, 0x2ad7d2bbu);
    MD5_STEP(MD5_I, b, c, d, a, x[9], 21, 0xeb86d391u);

    st[0] += a;
    st[1] += b;
    st[2] += c;
    st[3] += d;
}

/**
 * @brief Digest of @p len bytes at @p data: the whole of RFC 1321 (padding with 0x80 and
 * zeros to 56 mod 64 bytes, then the length in bits, little-endian, mod 2^64).
 */
MD5_FN void md5_digest(const uint8_t *data, uint64_t len, uint8_t out[MD5_DIGEST_BYTES])
{
    uint32_t st[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
    uint64_t full = len / 64;
    for (uint64_t k = 0; k < full; k++)
        md5_compress(st, data + 64 * k);

    uint8_t tail[128];
    unsigned rem = (unsigned)(len % 64), padded = rem < 56 ? 64 : 128;
    for (unsigned k = 0; k < rem; k++)
        tail[k] = data[64 * full + k];
    tail[rem] = 0x80;
    for (unsigned k = rem + 1; k < padded - 8; k++)
        tail[k] = 0;
    uint64_t bits = len * 8;
    for (unsigned k = 0; k < 8; k++)
        tail[padded - 8 + k] = (uint8_t)(bits >> (8 * k));
    md5_compress(st, tail);
    if (padded == 128)
        md5_compress(st, tail + 64);

    for (unsigned k = 0; k < 16; k++)
        out[k] = (uint8_t)(st[k / 4] >> (8 * (k % 4)));
}

/** @brief A digest as 32 lowercase hex digits and a NUL, in @p hex (33 bytes). */
MD5_FN void md5_hex(const uint8_t digest[MD5_DIGEST_BYTES], char hex[33])
{
    const char *digits = "0123456789abcdef";
    for (int k = 0; k < 16; k++) {
        hex[2 * k] = digits[digest[k] >> 4];
        hex[2 * k + 1] = digits[digest[k] & 15];
    }
    hex[32] = '\0';
}

#endif /* APP_MD5_H */
