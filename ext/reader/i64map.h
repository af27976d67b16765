/*
** i64map.h — a map from int64 keys to int64 indexes (open addressing,
** linear probing), and an array by key beside it once every key is in and
** all are small.  The XSpace decoder (xplane_pb.c) keeps a plane's
** event_metadata and stat_metadata maps in it: every event looks its
** metadata up, so the lookup is inline here.
*/
#ifndef PROFSUM_I64MAP_H
#define PROFSUM_I64MAP_H

#include <stdint.h>

typedef struct ProfsumI64Map {
  int64_t *aKey;           /* the keys, and aIdx after them in one block */
  int64_t *aIdx;           /* the index of each slot's key, -1: empty */
  int64_t nSlot;           /* a power of two, or 0 */
  int64_t nUsed;
  int32_t *aDense;         /* index by key below nDense, -1: none
                           ** (profsumI64MapDense) */
  int64_t nDense;
} ProfsumI64Map;

/* The first slot to probe for key k in a table of nSlot slots (a power of
** two): Fibonacci hashing of the key. */
static inline int64_t profsumI64MapSlot(int64_t k, int64_t nSlot){
  uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ULL;
  h ^= h >> 29;
  return (int64_t)(h & (uint64_t)(nSlot-1));
}

/* The index stored for key, or -1 when there is none. */
static inline int64_t profsumI64MapFind(const ProfsumI64Map *m, int64_t key){
  int64_t i;
  if( (uint64_t)key < (uint64_t)m->nDense ) return m->aDense[key];
  if( m->nSlot==0 ) return -1;
  for(i=profsumI64MapSlot(key, m->nSlot); m->aIdx[i]>=0; i=(i+1)&(m->nSlot-1)){
    if( m->aKey[i]==key ) return m->aIdx[i];
  }
  return -1;
}

/* Store key -> idx (idx >= 0), replacing what key had: *pOld gets that
** index, or -1.  Drops the array by key (it no longer covers every key).
** SQLITE_OK, or SQLITE_NOMEM with the map as it was. */
int profsumI64MapPut(ProfsumI64Map *m, int64_t key, int64_t idx, int64_t *pOld);

/* Once every key is in: when all keys are below 4 per key + 256 (writers
** number metadata 1, 2, 3, ...) and every index fits 32 bits, build the
** array by key, so a lookup reads 4 bytes of a small array instead of
** probing the table.  Otherwise, or without memory, the table alone
** serves (nothing is lost). */
void profsumI64MapDense(ProfsumI64Map *m);

/* Free the map's memory; it is empty (all zero) after. */
void profsumI64MapClear(ProfsumI64Map *m);

#endif /* PROFSUM_I64MAP_H */
