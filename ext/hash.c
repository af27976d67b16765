/*
** hash.c — SHA-256 (FIPS 180-4) of a file, for trace provenance.
**
** Written here rather than taken from a library: the only Debian
** libraries at hand that have it (OpenSSL's libcrypto, GnuTLS/nettle) would
** add a link dependency for ~100 lines; this implementation hashes at
** roughly 200–300 MB/s, a small cost next to inflating the same file.
*/
#include "profsum_int.h"
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static const uint32_t K256[64] = {
  0x428a2f98,0x71374491,0xb5c0fbcf,0xe9b5dba5,0x3956c25b,0x59f111f1,0x923f82a4,0xab1c5ed5,
  0xd807aa98,0x12835b01,0x243185be,0x550c7dc3,0x72be5d74,0x80deb1fe,0x9bdc06a7,0xc19bf174,
  0xe49b69c1,0xefbe4786,0x0fc19dc6,0x240ca1cc,0x2de92c6f,0x4a7484aa,0x5cb0a9dc,0x76f988da,
  0x983e5152,0xa831c66d,0xb00327c8,0xbf597fc7,0xc6e00bf3,0xd5a79147,0x06ca6351,0x14292967,
  0x27b70a85,0x2e1b2138,0x4d2c6dfc,0x53380d13,0x650a7354,0x766a0abb,0x81c2c92e,0x92722c85,
  0xa2bfe8a1,0xa81a664b,0xc24b8b70,0xc76c51a3,0xd192e819,0xd6990624,0xf40e3585,0x106aa070,
  0x19a4c116,0x1e376c08,0x2748774c,0x34b0bcb5,0x391c0cb3,0x4ed8aa4a,0x5b9cca4f,0x682e6ff3,
  0x748f82ee,0x78a5636f,0x84c87814,0x8cc70208,0x90befffa,0xa4506ceb,0xbef9a3f7,0xc67178f2
};

#define ROR(x,n) (((x)>>(n)) | ((x)<<(32-(n))))

/* Process one 64-byte block. */
static void sha256Block(uint32_t *h, const unsigned char *p){
  uint32_t w[64], a, b, c, d, e, f, g, hh;
  int i;
  for(i=0; i<16; i++){
    w[i] = ((uint32_t)p[4*i]<<24) | ((uint32_t)p[4*i+1]<<16) | ((uint32_t)p[4*i+2]<<8) | p[4*i+3];
  }
  for(i=16; i<64; i++){
    uint32_t s0 = ROR(w[i-15],7) ^ ROR(w[i-15],18) ^ (w[i-15]>>3);
    uint32_t s1 = ROR(w[i-2],17) ^ ROR(w[i-2],19) ^ (w[i-2]>>10);
    w[i] = w[i-16] + s0 + w[i-7] + s1;
  }
  a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; hh = h[7];
  for(i=0; i<64; i++){
    uint32_t S1 = ROR(e,6) ^ ROR(e,11) ^ ROR(e,25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = hh + S1 + ch + K256[i] + w[i];
    uint32_t S0 = ROR(a,2) ^ ROR(a,13) ^ ROR(a,22);
    uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = S0 + mj;
    hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* See hash.h. */
void profsumSha256Init(ProfsumSha256 *s){
  static const uint32_t h0[8] = {0x6a09e667,0xbb67ae85,0x3c6ef372,0xa54ff53a,
                                 0x510e527f,0x9b05688c,0x1f83d9ab,0x5be0cd19};
  memcpy(s->h, h0, sizeof(h0));
  s->nTotal = 0;
  s->nBuf = 0;
}

/* See hash.h. */
void profsumSha256Update(ProfsumSha256 *s, const unsigned char *p, size_t n){
  s->nTotal += n;
  if( s->nBuf ){
    size_t k = 64 - s->nBuf;
    if( k>n ) k = n;
    memcpy(s->buf + s->nBuf, p, k);
    s->nBuf += k; p += k; n -= k;
    if( s->nBuf==64 ){ sha256Block(s->h, s->buf); s->nBuf = 0; }
  }
  while( n>=64 ){ sha256Block(s->h, p); p += 64; n -= 64; }
  if( n ){ memcpy(s->buf, p, n); s->nBuf = n; }
}

/* See hash.h. */
void profsumSha256Hex(ProfsumSha256 *s, char *zHex){
  static const char hx[] = "0123456789abcdef";
  uint64_t bits = s->nTotal*8;
  unsigned char pad[72];
  size_t nPad = (s->nBuf<56) ? 56 - s->nBuf : 120 - s->nBuf;
  int i;
  memset(pad, 0, sizeof(pad));
  pad[0] = 0x80;
  for(i=0; i<8; i++) pad[nPad+i] = (unsigned char)(bits>>(56-8*i));
  profsumSha256Update(s, pad, nPad+8);
  for(i=0; i<32; i++){
    unsigned char b = (unsigned char)(s->h[i/4]>>(24-8*(i%4)));
    zHex[2*i] = hx[b>>4];
    zHex[2*i+1] = hx[b&15];
  }
  zHex[64] = 0;
}

/* See hash.h. */
int profsumSha256File(const char *zPath, char *zHex, sqlite3_int64 *pnSize, char **pzErr){
  ProfsumSha256 s;
  unsigned char *buf;
  int fd = open(zPath, O_RDONLY|O_CLOEXEC);
  sqlite3_int64 n = 0;
  if( fd<0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot open (%s)", zPath, strerror(errno));
    return SQLITE_CANTOPEN;
  }
  buf = sqlite3_malloc64(1<<18);
  if( buf==0 ){ close(fd); return SQLITE_NOMEM; }
  profsumSha256Init(&s);
  for(;;){
    ssize_t got = read(fd, buf, 1<<18);
    if( got<0 ){
      if( errno==EINTR ) continue;
      *pzErr = sqlite3_mprintf("'%s': read error (%s)", zPath, strerror(errno));
      sqlite3_free(buf);
      close(fd);
      return SQLITE_IOERR;
    }
    if( got==0 ) break;
    profsumSha256Update(&s, buf, (size_t)got);
    n += got;
  }
  sqlite3_free(buf);
  close(fd);
  profsumSha256Hex(&s, zHex);
  if( pnSize ) *pnSize = n;
  return SQLITE_OK;
}
