/*
** diaglist.h — a compact list of diagnostics kept in memory: what
** profsum_diagnostics(path) lists and what an import stores with
** store_diagnostics 'all'.  A trace can give one diagnostic per event
** (time_rounded of a converted XPlane: millions), so a row is a fixed
** 32-byte record and its detail text goes to large shared blocks, not an
** allocation of its own.
**
**   ProfsumDiagList L;
**   memset(&L, 0, sizeof(L));
**   if( profsumDiagListAdd(&L, idx, off, "time_rounded", zDetail) ) ... SQLITE_NOMEM
**   profsumDiagListSort(&L);                  (offset order, unknown last)
**   for(i=0; i<L.n; i++) use L.a[i], profsumDiagListKind(&L, &L.a[i]),
**                            profsumDiagListDetail(&L, &L.a[i]);
**   profsumDiagListFree(&L);
**
** Conventions: SQLite's allocator; every size is checked before it grows
** (no overflow); after SQLITE_NOMEM no row was added, and the list is
** still the caller's to free.  The records are one array (sorted in
** place), which SQLite's allocator keeps under 2 GiB: about 67 million
** rows, then SQLITE_NOMEM.
*/
#ifndef PROFSUM_DIAGLIST_H
#define PROFSUM_DIAGLIST_H

#include "profsum_int.h"

/* One diagnostic: its entry index and byte offset (-1: none, unknown), the
** place of its detail (block << 32 | byte in the block; it grows with the
** arrival order, so it orders rows of one offset), the detail's length
** (NUL-terminated in its block) and its kind (an index of aKind). */
typedef struct ProfsumDiagRec {
  int64_t idx, off;
  uint64_t pos;
  uint32_t nDetail;
  uint32_t iKind;
} ProfsumDiagRec;

typedef struct ProfsumDiagList {
  ProfsumDiagRec *a;          /* the rows, in arrival order until sorted */
  int64_t n, nAlloc;
  char **aBlk;                /* the detail blocks */
  int64_t nBlk, nBlkAlloc;
  uint32_t nUsed, nSize;      /* bytes used and allocated of the last block */
  const char **aKind;         /* the kinds met (static strings) */
  int64_t nKind, nKindAlloc;
  uint32_t iLastKind;         /* index of the kind last added (a cache) */
} ProfsumDiagList;

/* Append a diagnostic (zKind static, zDetail copied; NULL is read as "").
** SQLITE_OK or SQLITE_NOMEM (no row added). */
int profsumDiagListAdd(ProfsumDiagList *L, int64_t idx, int64_t off,
                       const char *zKind, const char *zDetail);

/* Order the rows by byte offset (unknown offsets last), rows of one offset
** in arrival order (a no-op when they are in that order already). */
void profsumDiagListSort(ProfsumDiagList *L);

/* The kind and the NUL-terminated detail of row r of L. */
static inline const char *profsumDiagListKind(const ProfsumDiagList *L, const ProfsumDiagRec *r){
  return L->aKind[r->iKind];
}
static inline const char *profsumDiagListDetail(const ProfsumDiagList *L, const ProfsumDiagRec *r){
  return L->aBlk[r->pos>>32] + (uint32_t)r->pos;
}

/* Free what L holds and zero it (a zeroed list is a no-op). */
void profsumDiagListFree(ProfsumDiagList *L);

#endif /* PROFSUM_DIAGLIST_H */
