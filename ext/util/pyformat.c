/*
** pyformat.c — Python-exact float formatting (contract in pyformat.h):
** C printf in the C locale, which rounds a double's exact binary value
** the way Python's format() does.
*/
#include "profsum_int.h"
#include "pyformat.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>

/* vsnprintf in the C locale for LC_NUMERIC (decimal point '.'), whatever
** locale the host process set.  glibc's newlocale() returns its static C
** locale object for "C" without allocating; if it fails anyway, format
** in the current locale. */
static int pyVformat(char *zBuf, size_t nBuf, const char *zFmt, va_list ap){
  locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = c!=(locale_t)0 ? uselocale(c) : (locale_t)0;
  int n = vsnprintf(zBuf, nBuf, zFmt, ap);
  if( c!=(locale_t)0 ){
    uselocale(old);
    freelocale(c);
  }
  return n;
}

/* See pyformat.h. */
char *profsumPyVformat(const char *zFmt, va_list ap){
  va_list ap2;
  int n;
  char *z;
  va_copy(ap2, ap);
  n = pyVformat(0, 0, zFmt, ap2);
  va_end(ap2);
  if( n<0 ) return 0;
  z = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if( z ) pyVformat(z, (size_t)n + 1, zFmt, ap);
  return z;
}

/* See pyformat.h. */
char *profsumPyFormat(const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = profsumPyVformat(zFmt, ap);
  va_end(ap);
  return z;
}

/* See pyformat.h.  Short texts (all in practice) are formatted on the
** stack; a longer one is formatted in place: n bytes are reserved in s
** with sqlite3_str_appendchar, then written through sqlite3_str_value
** (the terminating NUL lands on index sqlite3_str_length, the byte
** sqlite3_str_value itself NUL-terminates).  A printf encoding error
** (n < 0, not possible with the formats used) appends nothing; there is
** no public call to put s in an error state for it. */
void profsumStrAppendPy(sqlite3_str *s, const char *zFmt, ...){
  char zBuf[256];
  va_list ap;
  int n, nOld;
  char *z;
  va_start(ap, zFmt);
  n = pyVformat(zBuf, sizeof(zBuf), zFmt, ap);
  va_end(ap);
  if( n<0 ) return;
  if( n<(int)sizeof(zBuf) ){
    sqlite3_str_append(s, zBuf, n);
    return;
  }
  nOld = sqlite3_str_length(s);
  sqlite3_str_appendchar(s, n, ' ');
  if( sqlite3_str_errcode(s) ) return;
  z = sqlite3_str_value(s);
  if( z==0 ) return;
  va_start(ap, zFmt);
  pyVformat(z + nOld, (size_t)n + 1, zFmt, ap);
  va_end(ap);
}
