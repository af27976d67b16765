/*
** nearfmt.c — see nearfmt.h.
*/
#include "profsum_int.h"
#include "nearfmt.h"

#include <math.h>
#include <string.h>

/* The multiple of step nearest to x, as the double nearest to it: for a
** step that is the inverse of an integer n (0.1, 0.01), k / n, which is
** the correctly rounded k/10 where k * 0.1 is not (3 * 0.1 is
** 0.30000000000000004, not 0.3); else k * step.  x itself when step is
** not positive or not finite. */
static double nearMultiple(double x, double step){
  double k, n;
  if( !(step>0.0) || !isfinite(step) ) return x;
  k = floor(x/step + 0.5);
  if( step<1.0 ){
    n = floor(1.0/step + 0.5);
    if( n>0.0 && fabs(n*step - 1.0)<1e-12 ) return k/n;
  }
  return k*step;
}

/* Append x with as many significant digits (15 to 17, SQLite's "%!.Ng")
** as it takes for its text to differ from m's with as many; 17 always
** tells two doubles apart. */
static void nearAppendSig(sqlite3_str *s, double x, double m){
  char z[64], zM[64];
  int n;
  for(n=15; n<17; n++){
    sqlite3_snprintf(sizeof(z), z, "%!.*g", n, x);
    sqlite3_snprintf(sizeof(zM), zM, "%!.*g", n, m);
    if( x==m || strcmp(z, zM)!=0 ) break;
  }
  if( n==17 ) sqlite3_snprintf(sizeof(z), z, "%!.17g", x);
  sqlite3_str_appendall(s, z);
}

/* See nearfmt.h.  Below 1e15 with at most 9 decimals a text has at most
** 27 bytes, so it is written on the stack. */
void profsumStrAppendNear(sqlite3_str *s, double x, int d, double step){
  char z[64], zM[64];
  double m;
  if( d<0 ) d = 0;
  if( d>9 ) d = 9;
  if( !(fabs(x)<1e15) ){ sqlite3_str_appendf(s, "%!.15g", x); return; }
  m = nearMultiple(x, step);
  for(;;){
    sqlite3_snprintf(sizeof(z), z, "%.*f", d, x);
    if( m==x ) break;
    sqlite3_snprintf(sizeof(zM), zM, "%.*f", d, m);
    if( strcmp(z, zM)!=0 ) break;
    if( d>=9 ){ nearAppendSig(s, x, m); return; }
    d++;
  }
  sqlite3_str_appendall(s, z);
}

/* See nearfmt.h.  Each text is Python's "%.Ng" (profsumPyFormat); out of
** memory leaves the error in s (profsumStrAppendPy). */
void profsumStrAppendNearG(sqlite3_str *s, double x, int sig, double step){
  double m = nearMultiple(x, step);
  int n;
  if( sig<1 ) sig = 1;
  if( sig>17 ) sig = 17;
  for(n=sig; n<17 && isfinite(x) && m!=x; n++){
    char *z = profsumPyFormat("%.*g", n, x);
    char *zM = profsumPyFormat("%.*g", n, m);
    int bSame = z && zM && strcmp(z, zM)==0;
    sqlite3_free(z);
    sqlite3_free(zM);
    if( !bSame ) break;
  }
  profsumStrAppendPy(s, "%.*g", n, x);
}
