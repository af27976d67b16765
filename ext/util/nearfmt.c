/*
** nearfmt.c — see nearfmt.h.
*/
#include "profsum_int.h"
#include "nearfmt.h"

#include <math.h>
#include <string.h>

/* See nearfmt.h.  Below 1e15 with at most 9 decimals a text has at most
** 27 bytes, so it is written on the stack. */
void profsumStrAppendNear(sqlite3_str *s, double x, int d, double step){
  char z[64], zM[64];
  double m;
  if( d<0 ) d = 0;
  if( d>9 ) d = 9;
  if( !(fabs(x)<1e15) ){ sqlite3_str_appendf(s, "%!.15g", x); return; }
  m = (step>0.0 && isfinite(step)) ? step*floor(x/step + 0.5) : x;
  for(;;){
    sqlite3_snprintf(sizeof(z), z, "%.*f", d, x);
    if( m==x ) break;
    sqlite3_snprintf(sizeof(zM), zM, "%.*f", d, m);
    if( strcmp(z, zM)!=0 ) break;
    if( d>=9 ){ sqlite3_str_appendf(s, "%!.15g", x); return; }
    d++;
  }
  sqlite3_str_appendall(s, z);
}
