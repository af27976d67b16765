/*
** cnum.h — numbers in text, the same in every locale.
**
** JSON, trace files and Python's repr write numbers with a '.' whatever
** the host's locale.  The C library's strtod() and printf("%e") follow the
** calling thread's LC_NUMERIC, which a host process may set (a notebook
** that calls locale.setlocale(locale.LC_ALL, "") in a German session reads
** "1.5" as 1 and writes "1,5e+00").  Every conversion between text and
** double in the extension goes through these two functions, which use the
** "C" locale whatever the process has set.
*/
#ifndef PROFSUM_CNUM_H
#define PROFSUM_CNUM_H

#include <stddef.h>
#include <stdint.h>

/* strtod(z, pzEnd) in the "C" locale: same contract as strtod(3). */
double profsumStrtod(const char *z, char **pzEnd);

/* snprintf(zBuf, n, "%.*e", nPrec, r) in the "C" locale: the shortest
** exponent form with nPrec digits after the point.  Returns what
** snprintf returns. */
int profsumFmtExp(char *zBuf, size_t n, int nPrec, double r);

/* The decimal digits of v (a '-' first when negative) written to z (room
** for 21 bytes), NUL-terminated; returns their count.  No locale can
** change an integer's digits; a printf costs ten times as much, and the
** callers write one per event or per document field. */
static inline int profsumFmtI64(int64_t v, char *z){
  char t[24];
  int n = 0, k = 0;
  uint64_t u = v<0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do{ t[n++] = (char)('0' + u%10); u /= 10; }while( u );
  if( v<0 ) z[k++] = '-';
  while( n ) z[k++] = t[--n];
  z[k] = 0;
  return k;
}

/* The decimal digits of u written to z (room for 21 bytes),
** NUL-terminated; returns their count (profsumFmtI64 for unsigned). */
static inline int profsumFmtU64(uint64_t u, char *z){
  char t[24];
  int n = 0, k = 0;
  do{ t[n++] = (char)('0' + u%10); u /= 10; }while( u );
  while( n ) z[k++] = t[--n];
  z[k] = 0;
  return k;
}

#endif
