/*
** cnum.c — locale-independent strtod and "%e" formatting (see cnum.h).
**
** One "C" locale object is made on first use (pthread_once) and kept for
** the life of the process: strtod_l() reads with it, and the formatting
** switches the calling thread to it with uselocale() for the one snprintf
** call (per-thread: other threads of the host keep their locale).  If the
** object cannot be made (out of memory at first use), the thread's own
** locale is used, which is right in every process that never set one.
*/
#include "cnum.h"

#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static locale_t cLocale = (locale_t)0;
static pthread_once_t cLocaleOnce = PTHREAD_ONCE_INIT;

/* Make the "C" locale object once (pthread_once's callback). */
static void cLocaleInit(void){
  cLocale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* The "C" locale object, or 0 if it could not be made. */
static locale_t cLocaleGet(void){
  pthread_once(&cLocaleOnce, cLocaleInit);
  return cLocale;
}

/* See cnum.h. */
double profsumStrtod(const char *z, char **pzEnd){
  locale_t c = cLocaleGet();
  if( c==(locale_t)0 ) return strtod(z, pzEnd);
  return strtod_l(z, pzEnd, c);
}

/* See cnum.h. */
int profsumFmtExp(char *zBuf, size_t n, int nPrec, double r){
  locale_t c = cLocaleGet();
  locale_t old;
  int rc;
  if( c==(locale_t)0 ) return snprintf(zBuf, n, "%.*e", nPrec, r);
  old = uselocale(c);
  rc = snprintf(zBuf, n, "%.*e", nPrec, r);
  uselocale(old);
  return rc;
}
