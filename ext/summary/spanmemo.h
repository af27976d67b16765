/*
** spanmemo.h — the raw bytes of some of an entry's args spans, kept to
** tell whether a later entry has the same ones (byte for byte, with the
** same JSON types): whatever was worked out from them then holds again,
** without decoding, interning or parsing them anew.  The engine keeps one
** per name (engine_read.c: tf_op and source), the XLA collector one per
** event key (insights_xla.c: the args of a device op).  Inlined where
** used: they run for every event.
*/
#ifndef PROFSUM_SPANMEMO_H
#define PROFSUM_SPANMEMO_H

#include "profsum_int.h"
#include "profsum_reader.h"

#include <string.h>

#define SPANMEMO_MAX 8        /* spans a memo can hold */

typedef struct SpanMemo {
  unsigned char aType[SPANMEMO_MAX];   /* the spans' JSON types */
  int64_t aLen[SPANMEMO_MAX];          /* their lengths */
  char *aRaw; int64_t nCap;            /* their bytes one after the other */
  int set;                             /* 1: the fields above hold spans */
} SpanMemo;

/* 1 when m holds the spans ev->aArg[aKey[0..n)] (n <= SPANMEMO_MAX). */
static inline int profsumSpanMemoSame(const SpanMemo *m, const ProfsumEvent *ev,
                                      const int *aKey, int n){
  const char *z = m->aRaw;
  int i;
  if( !m->set ) return 0;
  for(i=0; i<n; i++){
    const ProfsumSpan *v = &ev->aArg[aKey[i]];
    if( v->type!=m->aType[i] || v->n!=m->aLen[i] ) return 0;
    if( v->n>0 ){          /* (z is 0 while every span held was empty) */
      if( memcmp(v->z, z, (size_t)v->n)!=0 ) return 0;
      z += v->n;
    }
  }
  return 1;
}

/* Make m hold the spans ev->aArg[aKey[0..n)].  *pnBytes counts the text
** of all the memos of their owner, which may not pass nMax: when it would,
** m is left holding nothing (set 0).  SQLITE_OK or SQLITE_NOMEM (m holds
** nothing then either). */
static inline int profsumSpanMemoSet(SpanMemo *m, const ProfsumEvent *ev, const int *aKey,
                                     int n, int64_t *pnBytes, int64_t nMax){
  int64_t nText = 0;
  char *z;
  int i;
  m->set = 0;
  for(i=0; i<n; i++) nText += ev->aArg[aKey[i]].n;
  if( nText>m->nCap ){
    int64_t nCap = (nText + 63) & ~(int64_t)63;
    char *a;
    if( *pnBytes - m->nCap + nCap > nMax ) return SQLITE_OK;
    a = sqlite3_realloc64(m->aRaw, (sqlite3_uint64)nCap);
    if( a==0 ) return SQLITE_NOMEM;
    *pnBytes += nCap - m->nCap;
    m->aRaw = a;
    m->nCap = nCap;
  }
  for(z=m->aRaw, i=0; i<n; i++){
    const ProfsumSpan *v = &ev->aArg[aKey[i]];
    m->aType[i] = v->type;
    m->aLen[i] = v->n;
    if( v->n>0 ){ memcpy(z, v->z, (size_t)v->n); z += v->n; }
  }
  m->set = 1;
  return SQLITE_OK;
}

#endif /* PROFSUM_SPANMEMO_H */
