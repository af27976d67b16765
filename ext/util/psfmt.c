/*
** psfmt.c — see psfmt.h.
*/
#include "profsum_int.h"
#include "psfmt.h"

/* See psfmt.h. */
void profsumStrAppendMicros(sqlite3_str *s, profsum_ps v){
  unsigned __int128 u = v<0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
  unsigned __int128 q = u/1000000;
  unsigned frac = (unsigned)(u%1000000);
  char z[64];
  int i = (int)sizeof(z);
  z[--i] = 0;
  do{ z[--i] = (char)('0' + (int)(q%10)); q /= 10; }while( q>0 );
  if( v<0 ) z[--i] = '-';
  sqlite3_str_appendall(s, z+i);
  if( frac ){
    char f[8];
    int k;
    sqlite3_snprintf(sizeof(f), f, "%06u", frac);
    for(k=6; k>0 && f[k-1]=='0'; k--){}
    sqlite3_str_appendchar(s, 1, '.');
    sqlite3_str_append(s, f, k);
  }
}
