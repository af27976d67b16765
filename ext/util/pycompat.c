/*
** pycompat.c — imitating Python (see pycompat.h): the reference tool's
** timestamp and path texts, truthiness and == on JSON values.
*/
#include "profsum_int.h"
#include "pycompat.h"

#include <string.h>
#include <time.h>

/* See pycompat.h. */
int profsumPyTruthy(const JNode *p){
  if( p==0 ) return 0;
  switch( p->type ){
    case JT_TRUE:   return 1;
    case JT_INT:    return p->i!=0;
    case JT_REAL:   return p->r!=0.0;
    case JT_STRING: return p->n>0;
    case JT_ARRAY: case JT_OBJECT: return p->nChild>0;
    default:        return 0;
  }
}

/* See pycompat.h. */
int profsumPyEq(const JNode *a, const JNode *b){
  int ta = a ? a->type : JT_NULL, tb = b ? b->type : JT_NULL, i;
  int na = ta==JT_INT || ta==JT_REAL || ta==JT_TRUE || ta==JT_FALSE;
  int nb = tb==JT_INT || tb==JT_REAL || tb==JT_TRUE || tb==JT_FALSE;
  if( na && nb ){
    double x = ta==JT_TRUE ? 1.0 : ta==JT_FALSE ? 0.0 : jNum(a);
    double y = tb==JT_TRUE ? 1.0 : tb==JT_FALSE ? 0.0 : jNum(b);
    if( ta==JT_INT && tb==JT_INT ) return a->i==b->i;
    return x==y;
  }
  if( ta!=tb ) return 0;
  switch( ta ){
    case JT_NULL:   return 1;
    case JT_STRING: return a->n==b->n && memcmp(a->z, b->z, (size_t)a->n)==0;
    case JT_ARRAY:
      if( a->nChild!=b->nChild ) return 0;
      for(i=0; i<a->nChild; i++) if( !profsumPyEq(a->a[i], b->a[i]) ) return 0;
      return 1;
    case JT_OBJECT:
      if( a->nChild!=b->nChild ) return 0;
      for(i=0; i<a->nChild; i++){
        const JNode *m = jGet(b, a->a[i]->zKey);
        if( m==0 || !profsumPyEq(a->a[i], m) ) return 0;
      }
      return 1;
  }
  return 0;
}

/* The current UTC time, ISO-8601 with a Z; the microseconds always
** (bAlways) or, as Python writes them, only when not 0. */
static void nowIso(char *zBuf, int nBuf, int bAlways){
  struct timespec ts;
  struct tm tm;
  long us;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  us = ts.tv_nsec/1000;
  if( us || bAlways ){
    sqlite3_snprintf(nBuf, zBuf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year+1900,
                     tm.tm_mon+1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
  }else{
    sqlite3_snprintf(nBuf, zBuf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year+1900,
                     tm.tm_mon+1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
}

/* See pycompat.h. */
void profsumNowIso(char *zBuf, int nBuf){
  nowIso(zBuf, nBuf, 0);
}

/* See pycompat.h. */
void profsumNowIsoUs(char *zBuf, int nBuf){
  nowIso(zBuf, nBuf, 1);
}

/* See pycompat.h. */
const char *profsumIsoWithUs(const char *zIso, char *zBuf, int nBuf){
  size_t n;
  const char *zColon;
  if( zIso==0 ) return 0;
  n = strlen(zIso);
  zColon = strrchr(zIso, ':');
  if( n<2 || zIso[n-1]!='Z' || zColon==0 || strchr(zColon, '.')!=0 || n+8>(size_t)nBuf ) return zIso;
  memcpy(zBuf, zIso, n-1);
  memcpy(zBuf+n-1, ".000000Z", 9);
  return zBuf;
}

/* See pycompat.h. */
char *profsumPyPathStr(const char *z){
  sqlite3_str *s = sqlite3_str_new(0);
  const char *p = z;
  int nPart = 0;
  if( z[0]=='/' ){
    if( z[1]=='/' && z[2]!='/' ){ sqlite3_str_appendall(s, "//"); p = z+2; }
    else{ sqlite3_str_appendall(s, "/"); while( *p=='/' ) p++; }
  }
  while( *p ){
    const char *q = p;
    while( *q && *q!='/' ) q++;
    if( q>p && !(q-p==1 && p[0]=='.') ){
      if( nPart>0 ) sqlite3_str_appendchar(s, 1, '/');
      sqlite3_str_append(s, p, (int)(q-p));
      nPart++;
    }
    p = q;
    while( *p=='/' ) p++;
  }
  if( sqlite3_str_length(s)==0 ) sqlite3_str_appendall(s, ".");
  return sqlite3_str_finish(s);
}
