/*
** buf.c — growing text buffers (Buf) and JSON objects built in them (JObj),
** for the options passed to the SQL functions and for text assembled
** before it is written.  Out of memory is fatal (fail).
*/
#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append the n bytes of z to b and keep b->z NUL-terminated; the buffer
** grows (doubling) as needed.  Out of memory is fatal. */
void bufAppend(Buf *b, const char *z, size_t n){
  if( b->n + n + 1 > b->nAlloc ){
    size_t nNew = (b->nAlloc ? b->nAlloc*2 : 128) + n;
    char *zNew = realloc(b->z, nNew);
    if( zNew==0 ) fail(EXIT_FAIL, "out of memory");
    b->z = zNew;
    b->nAlloc = nNew;
  }
  memcpy(b->z + b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}
/* Append the NUL-terminated text z (bufAppend). */
void bufPuts(Buf *b, const char *z){ bufAppend(b, z, strlen(z)); }

/* Append printf-style text (SQLite's formatting: %lld, %.0f, %s, ...); the
** buffer grows as needed, so the text may be of any length.  Out of
** memory is fatal. */
void bufPrintf(Buf *b, const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = xvprintf(zFmt, ap);
  va_end(ap);
  bufPuts(b, z);
  sqlite3_free(z);
}

/* Append z as a JSON string literal. */
void bufJsonStr(Buf *b, const char *z){
  const unsigned char *u = (const unsigned char*)z;
  bufPuts(b, "\"");
  for(; *u; u++){
    char esc[8];
    if( *u=='"' || *u=='\\' ){ esc[0] = '\\'; esc[1] = (char)*u; bufAppend(b, esc, 2); }
    else if( *u<0x20 ){ snprintf(esc, sizeof(esc), "\\u%04x", *u); bufPuts(b, esc); }
    else bufAppend(b, (const char*)u, 1);
  }
  bufPuts(b, "\"");
}

/* A double as a JSON number for profsum (jsontree reads Python's
** Infinity, -Infinity and NaN tokens), always with a fraction or an
** exponent, so that it is read back as a float: -0.0 keeps its sign
** ("-0" would be the integer 0), as Python's float('-0') does. */
static void fmtJsonNum(char *z, size_t n, double v){
  if( isnan(v) ) snprintf(z, n, "NaN");
  else if( isinf(v) ) snprintf(z, n, "%s", v>0 ? "Infinity" : "-Infinity");
  else{
    snprintf(z, n, "%.17g", v);
    if( strpbrk(z, ".e")==0 && strlen(z)+3<=n ) strcat(z, ".0");
  }
}

/* JSON object under construction: {"k": v, ...}, built in o->b.  Start from
** a zeroed JObj, add members with jobj*(), end with jobjEnd, free o->b.z.
** jobjKey writes the separator (or the opening brace) and the key. */
static void jobjKey(JObj *o, const char *zKey){
  bufPuts(&o->b, o->n++ ? ", " : "{");
  bufJsonStr(&o->b, zKey);
  bufPuts(&o->b, ": ");
}
/* Member zKey: the JSON string zVal, or null when zVal is 0. */
void jobjStr(JObj *o, const char *zKey, const char *zVal){
  jobjKey(o, zKey);
  if( zVal ) bufJsonStr(&o->b, zVal); else bufPuts(&o->b, "null");
}
/* Member zKey: zRaw as it is (JSON text the caller made: true, [..]). */
void jobjRaw(JObj *o, const char *zKey, const char *zRaw){
  jobjKey(o, zKey);
  bufPuts(&o->b, zRaw);
}
/* Member zKey: the integer v. */
void jobjInt(JObj *o, const char *zKey, long long v){
  char z[32];
  snprintf(z, sizeof(z), "%lld", v);
  jobjRaw(o, zKey, z);
}
/* Member zKey: the double v (fmtJsonNum: Infinity/-Infinity/NaN tokens). */
void jobjNum(JObj *o, const char *zKey, double v){
  char z[40];
  fmtJsonNum(z, sizeof(z), v);
  jobjRaw(o, zKey, z);
}
/* Close the object; returns its text (owned by o, freed with free(o->b.z);
** "{}" when empty).  Call once. */
const char *jobjEnd(JObj *o){
  if( o->n==0 ) bufPuts(&o->b, "{");
  bufPuts(&o->b, "}");
  return o->b.z;
}

/* z quoted for a POSIX shell: as it is when it holds only characters no
** shell treats specially, else in single quotes ('\'' for a quote).
** Returns a malloc'd string. */
char *shellQuote(const char *z){
  Buf b;
  const char *c;
  if( z[0] && strspn(z, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+:@,%=")==strlen(z) ){
    return xstrdup(z);
  }
  memset(&b, 0, sizeof(b));
  bufPuts(&b, "'");
  for(c=z; *c; c++){
    if( *c=='\'' ) bufPuts(&b, "'\\''");
    else bufAppend(&b, c, 1);
  }
  bufPuts(&b, "'");
  return b.z;
}
