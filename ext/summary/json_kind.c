/*
** json_kind.c — the kind of a JSON file for profsum_import (json_kind.h):
** a bounded walk over the top-level keys of the streamed bytes, and the
** message that says why a file is neither a summary nor a trace
** (profsumSummaryFileProblem).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "json_kind.h"

#include <string.h>

#define PSK_WINDOW   65536

typedef struct KindRd {
  ProfsumSrc *pSrc;
  unsigned char *a;           /* window (PSK_WINDOW bytes) */
  size_t n, i;                /* bytes in the window, next byte */
  int bEnd;                   /* end of data or read error met */
  int bErr;                   /* a read error (corrupt gzip, I/O) */
} KindRd;

/* Next byte, or -1 at the end (or on a read error). */
static int krGet(KindRd *r){
  if( r->i>=r->n ){
    size_t got = 0;
    char *zErr = 0;
    if( r->bEnd ) return -1;
    if( profsumSrcRead(r->pSrc, r->a, PSK_WINDOW, &got, &zErr)!=SQLITE_OK ){
      r->bErr = 1;
      got = 0;
    }
    if( got==0 ){
      sqlite3_free(zErr);
      r->bEnd = 1;
      return -1;
    }
    r->n = got;
    r->i = 0;
  }
  return r->a[r->i++];
}

/* Give back the byte krGet() just returned (always in the window). */
static void krUnget(KindRd *r){ r->i--; }

/* Next byte that is not JSON whitespace, or -1. */
static int krNonWs(KindRd *r){
  int c;
  do{ c = krGet(r); }while( c==' ' || c=='\t' || c=='\n' || c=='\r' );
  return c;
}

/* Read the rest of a string (the opening quote was read).  The first
** nOut-1 decoded bytes go to zOut (NUL-terminated; escapes of ASCII
** characters decoded, other characters kept as bytes above 0x7f, so
** they never equal an ASCII name); *pbLong set when more did not fit.
** zOut may be 0 (skip).  Returns 0, or -1 at the end of data. */
static int krString(KindRd *r, char *zOut, int nOut, int *pbLong){
  int n = 0, c;
  if( pbLong ) *pbLong = 0;
  for(;;){
    c = krGet(r);
    if( c<0 ) return -1;
    if( c=='"' ) break;
    if( c=='\\' ){
      c = krGet(r);
      if( c<0 ) return -1;
      switch( c ){
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': {
          int k, v = 0;
          for(k=0; k<4; k++){
            int h = krGet(r);
            if( h<0 ) return -1;
            v = v*16 + (h>='0' && h<='9' ? h-'0' : h>='a' && h<='f' ? h-'a'+10
                        : h>='A' && h<='F' ? h-'A'+10 : 0);
          }
          c = v<0x80 ? v : 0xff;
          break;
        }
        default: break;          /* \" \\ \/ (and anything else: itself) */
      }
    }
    if( zOut ){
      if( n<nOut-1 ) zOut[n++] = (char)c;
      else if( pbLong ) *pbLong = 1;
    }
  }
  if( zOut ) zOut[n] = 0;
  return 0;
}

/* Skip one value whose first byte c was read: a string, an object or
** array (brackets counted outside strings), or a scalar token (up to the
** next delimiter, which is given back).  Returns 0, or -1 at the end. */
static int krSkipValue(KindRd *r, int c){
  if( c=='"' ) return krString(r, 0, 0, 0);
  if( c=='{' || c=='[' ){
    sqlite3_int64 depth = 1;
    while( depth>0 ){
      c = krGet(r);
      if( c<0 ) return -1;
      if( c=='"' ){
        if( krString(r, 0, 0, 0) ) return -1;
      }else if( c=='{' || c=='[' ){
        depth++;
      }else if( c=='}' || c==']' ){
        depth--;
      }
    }
    return 0;
  }
  for(;;){
    c = krGet(r);
    if( c<0 ) return 0;           /* a scalar may end the data */
    if( c==',' || c=='}' || c==']' || c==' ' || c=='\t' || c=='\n' || c=='\r' ){
      krUnget(r);
      return 0;
    }
  }
}

/* The kind (PSK_*) of the (possibly gzipped) JSON file zPath.  With
** PSK_SCHEMA, *pzSchema (when pzSchema is not 0) gets the schema_version
** value for a message (sqlite3_malloc'd): a string quoted ('...'), another
** value as its JSON type ("an object", "null", ...). */
int profsumJsonFileKind(const char *zPath, char **pzSchema){
  KindRd r;
  char *zErr = 0;
  char zKey[32], zVal[64];
  int c, bLong, kind = PSK_UNKNOWN, bSchema = 0, bInObject = 0;
  if( pzSchema ) *pzSchema = 0;
  memset(&r, 0, sizeof(r));
  zVal[0] = 0;
  {
    int rcOpen = profsumSrcOpenFile(zPath, &r.pSrc, &zErr);
    if( rcOpen!=SQLITE_OK ){
      sqlite3_free(zErr);
      return rcOpen==SQLITE_NOMEM ? PSK_NOMEM : PSK_UNKNOWN;
    }
  }
  profsumSrcNoThread(r.pSrc);      /* usually one window is read: no ring ahead */
  r.a = sqlite3_malloc64(PSK_WINDOW);
  if( r.a==0 ){ kind = PSK_NOMEM; goto kind_done; }
  c = krNonWs(&r);
  if( c==0xEF ){                   /* UTF-8 byte order mark (the reader skips it too) */
    if( krGet(&r)!=0xBB || krGet(&r)!=0xBF ) goto kind_done;
    c = krNonWs(&r);
  }
  if( c=='[' ){
    c = krNonWs(&r);
    kind = c<0 ? PSK_UNKNOWN : c=='{' ? PSK_EVENTS : PSK_ARRAY;
    goto kind_done;
  }
  if( c!='{' ){
    if( c=='"' || c=='-' || (c>='0' && c<='9') || c=='t' || c=='f' || c=='n' ) kind = PSK_SCALAR;
    goto kind_done;
  }
  bInObject = 1;
  for(;;){
    c = krNonWs(&r);
    if( c=='}' ) break;            /* also after a trailing comma (the reader allows it) */
    if( c!='"' || krString(&r, zKey, (int)sizeof(zKey), &bLong) ) goto kind_done;
    if( krNonWs(&r)!=':' ) goto kind_done;
    if( !bLong && strcmp(zKey, "traceEvents")==0 ){
      kind = PSK_TRACE;
      goto kind_done;
    }
    c = krNonWs(&r);
    if( c<0 ) goto kind_done;
    if( !bLong && strcmp(zKey, "schema_version")==0 ){
      bSchema = 1;
      if( c=='"' ){
        char zStr[48];
        if( krString(&r, zStr, (int)sizeof(zStr), &bLong) ) goto kind_done;
        if( !bLong && strcmp(zStr, "profile_summary.v1")==0 ){
          kind = PSK_V1;
          goto kind_done;
        }
        sqlite3_snprintf((int)sizeof(zVal), zVal, "'%s%s'", zStr, bLong ? "..." : "");
      }else{
        sqlite3_snprintf((int)sizeof(zVal), zVal, "%s", c=='{' ? "an object" : c=='[' ? "an array"
            : c=='n' ? "null" : c=='t' || c=='f' ? "a boolean" : "a number");
        if( krSkipValue(&r, c) ) goto kind_done;
      }
    }else if( krSkipValue(&r, c) ){
      goto kind_done;
    }
    c = krNonWs(&r);
    if( c=='}' ) break;
    if( c!=',' ) goto kind_done;
  }
  kind = bSchema ? PSK_SCHEMA : PSK_OBJECT;
  if( bSchema && pzSchema ) *pzSchema = sqlite3_mprintf("%s", zVal);

kind_done:
  if( kind==PSK_UNKNOWN && bInObject && r.bEnd && !r.bErr ) kind = PSK_TRUNC;
  sqlite3_free(r.a);
  profsumSrcClose(r.pSrc);
  return kind;
}

/* See profsum_int.h. */
char *profsumSummaryFileProblem(const char *zPath){
  char *zSchema = 0, *z = 0;
  switch( profsumJsonFileKind(zPath, &zSchema) ){
    case PSK_ARRAY: case PSK_SCALAR:
      z = sqlite3_mprintf("Expected JSON object in summary '%s'.", zPath);
      break;
    case PSK_OBJECT:
      z = sqlite3_mprintf("'%s' is neither a profile_summary.v1 summary nor a trace: its "
          "top-level object has no \"schema_version\" and no \"traceEvents\"", zPath);
      break;
    case PSK_TRUNC:
      z = sqlite3_mprintf("'%s' ends inside its top-level object before a \"schema_version\" "
          "or \"traceEvents\" key: neither a summary nor a trace (a truncated file?)", zPath);
      break;
    case PSK_SCHEMA:
      z = sqlite3_mprintf("'%s' is not a profile_summary.v1 summary: its schema_version is %s "
          "(and it is no trace: no \"traceEvents\")", zPath, zSchema ? zSchema : "?");
      break;
    default:
      break;
  }
  sqlite3_free(zSchema);
  return z;
}
