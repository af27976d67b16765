/*
** wandb_pyjson.c — compact JSON text as Python's json.dumps(obj,
** sort_keys=True) writes it: the text W&B's Python SDK hashes and uploads
** (artifact metadata, the manifest) and the one the reference tool hashes
** for run_metadata.config_hash.
**
** Built with PROFSUM_OMIT_NETWORK this file is empty (only the W&B code
** uses it).
*/
#include "wandb_int.h"

#ifndef PROFSUM_OMIT_NETWORK
#include <stdlib.h>
#include <string.h>

/* Append the JSON string literal of z[0..n) with ensure_ascii escapes. */
static void wbPyStr(sqlite3_str *s, const char *z, int n){
  const unsigned char *u = (const unsigned char*)z;
  int i = 0;
  sqlite3_str_appendchar(s, 1, '"');
  while( i<n ){
    unsigned c = u[i], cp;
    int len = 1;
    if( c<0x80 ){ cp = c; }
    else if( (c&0xE0)==0xC0 && i+1<n ){ cp = ((c&0x1F)<<6)|(u[i+1]&0x3F); len = 2; }
    else if( (c&0xF0)==0xE0 && i+2<n ){
      cp = ((c&0x0F)<<12)|((u[i+1]&0x3F)<<6)|(u[i+2]&0x3F); len = 3;
    }else if( (c&0xF8)==0xF0 && i+3<n ){
      cp = ((c&0x07)<<18)|((u[i+1]&0x3F)<<12)|((u[i+2]&0x3F)<<6)|(u[i+3]&0x3F);
      len = 4;
    }else{ cp = 0xFFFD; }
    i += len;
    switch( cp ){
      case '"':  sqlite3_str_appendall(s, "\\\""); continue;
      case '\\': sqlite3_str_appendall(s, "\\\\"); continue;
      case '\n': sqlite3_str_appendall(s, "\\n"); continue;
      case '\r': sqlite3_str_appendall(s, "\\r"); continue;
      case '\t': sqlite3_str_appendall(s, "\\t"); continue;
      case '\b': sqlite3_str_appendall(s, "\\b"); continue;
      case '\f': sqlite3_str_appendall(s, "\\f"); continue;
      default: break;
    }
    if( cp>=0x20 && cp<0x7F ){
      sqlite3_str_appendchar(s, 1, (char)cp);
    }else if( cp<0x10000 ){
      sqlite3_str_appendf(s, "\\u%04x", cp);
    }else{
      cp -= 0x10000;
      sqlite3_str_appendf(s, "\\u%04x\\u%04x", 0xD800|(cp>>10), 0xDC00|(cp&0x3FF));
    }
  }
  sqlite3_str_appendchar(s, 1, '"');
}

/* qsort comparator: object members by key (UTF-8 byte order = code point
** order, as Python's sort_keys). */
static int wbCmpKey(const void *a, const void *b){
  const JNode *x = *(const JNode*const*)a, *y = *(const JNode*const*)b;
  return strcmp(x->zKey, y->zKey);
}

/* See wandb_int.h: p as json.dumps(p, sort_keys=True), appended to s. */
void wbPyDump(sqlite3_str *s, const JNode *p){
  int i;
  char buf[40];
  switch( p->type ){
    case JT_NULL:   sqlite3_str_appendall(s, "null"); break;
    case JT_FALSE:  sqlite3_str_appendall(s, "false"); break;
    case JT_TRUE:   sqlite3_str_appendall(s, "true"); break;
    case JT_INT:    sqlite3_str_appendf(s, "%lld", p->i); break;
    case JT_REAL:   jReprDouble(p->r, buf); sqlite3_str_appendall(s, buf); break;
    case JT_STRING: wbPyStr(s, p->z, p->n); break;
    case JT_ARRAY:
      sqlite3_str_appendchar(s, 1, '[');
      for(i=0; i<p->nChild; i++){
        if( i ) sqlite3_str_appendall(s, ", ");
        wbPyDump(s, p->a[i]);
      }
      sqlite3_str_appendchar(s, 1, ']');
      break;
    default: {
      JNode **a = sqlite3_malloc64(sizeof(JNode*)*(p->nChild+1));
      if( a==0 ){ sqlite3_str_appendall(s, "\x01oom"); break; }
      if( p->nChild>0 ) memcpy(a, p->a, sizeof(JNode*)*p->nChild);
      qsort(a, p->nChild, sizeof(JNode*), wbCmpKey);
      sqlite3_str_appendchar(s, 1, '{');
      for(i=0; i<p->nChild; i++){
        if( i ) sqlite3_str_appendall(s, ", ");
        wbPyStr(s, a[i]->zKey, (int)strlen(a[i]->zKey));
        sqlite3_str_appendall(s, ": ");
        wbPyDump(s, a[i]);
      }
      sqlite3_str_appendchar(s, 1, '}');
      sqlite3_free(a);
      break;
    }
  }
}

#endif /* !PROFSUM_OMIT_NETWORK */
