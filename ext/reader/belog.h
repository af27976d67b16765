/*
** belog.h — a compact log of B and E events, per track, in file order: what
** the B/E pairing of an import's own read pass keeps of each event until
** the read ends (track.c pairs them then, as profsum_diagnostics does).
**
** An event is stored as the difference from the event before it on its
** track: the entry index, the byte offset and the exact ps time as
** variable-length integers (LEB128, the time zigzagged), the phase in a
** bit, and the 32-bit name hash only when it differs from the one before
** (an E closing the B just before it has the same).  A B/E event of an
** ordinary trace takes 5 to 12 bytes, where a ProfsumTrackRec takes 80.
** Every value is kept exactly, whatever the input (differences wrap in
** unsigned arithmetic and are added back the same way): reading a track
** back gives the events as they were appended.
**
** The log also says whether each track's events came in (ts, entry index)
** order, the order the pairing needs, so that a pairing of such a track
** reads it as it is and sorts only the other tracks.
**
**   ProfsumBeLog *L;
**   if( profsumBeLogOpen(&L) ) ... SQLITE_NOMEM
**   profsumBeLogAdd(L, trk, &ev) for every B/E event, in file order
**   for(trk=0; trk<profsumBeLogTracks(L); trk++){
**     ProfsumBeCursor c; ProfsumBeEv ev;
**     profsumBeLogFirst(L, trk, &c);
**     while( profsumBeLogNext(&c, &ev) ) ...
**     profsumBeLogDrop(L, trk);              (optional: its memory back)
**   }
**   profsumBeLogFree(L);
**
** Memory: 112 bytes per track (in blocks of 64 tracks), which hold its
** first 40 bytes of events, and its other bytes in chunks (the first of
** 48 bytes, doubling up to 16 KiB: no allocation grows with the trace).
** SQLite's allocator.
*/
#ifndef PROFSUM_BELOG_H
#define PROFSUM_BELOG_H

#include "profsum_int.h"

/* One B or E event as the pairing reads it. */
typedef struct ProfsumBeEv {
  profsum_ps ts;        /* start (exact ps) */
  int64_t idx;          /* entry index */
  int64_t iOffset;      /* byte offset of the event */
  uint32_t nameHash;    /* as ProfsumTrackRec.nameHash (0 = none) */
  char ph;              /* 'B' or 'E' */
} ProfsumBeEv;

typedef struct ProfsumBeLog ProfsumBeLog;
typedef struct ProfsumBeChunk ProfsumBeChunk;

/* A reader of one track's events (profsumBeLogFirst): plain data, no
** memory of its own.  Valid until that track is dropped or the log
** freed. */
typedef struct ProfsumBeCursor {
  const unsigned char *a;   /* the bytes being read (the track's own, or a chunk's) */
  uint32_t nByte;           /* how many there are */
  uint32_t i;               /* the next one */
  const ProfsumBeChunk *pNext;  /* the chunk after them */
  int64_t nLeft;            /* events not yet read */
  ProfsumBeEv last;         /* the event read last (the base of the next) */
} ProfsumBeCursor;

/* A new empty log in *pp: SQLITE_OK, or SQLITE_NOMEM with *pp = 0. */
int profsumBeLogOpen(ProfsumBeLog **pp);

/* Append ev (ph 'B' or 'E') to track trk (0 <= trk <= INT32_MAX-1).
** SQLITE_OK, or SQLITE_NOMEM with the log as it was before the call. */
int profsumBeLogAdd(ProfsumBeLog *L, int32_t trk, const ProfsumBeEv *ev);

/* 1 + the highest track that has had an event (0 for an empty log). */
int64_t profsumBeLogTracks(const ProfsumBeLog *L);

/* Events appended to track trk (0 for a track that has none). */
int64_t profsumBeLogCount(const ProfsumBeLog *L, int64_t trk);

/* 1 when track trk's events came in (ts, idx) order, each after the one
** before it: read in file order, they are in the pairing's order. */
int profsumBeLogInOrder(const ProfsumBeLog *L, int64_t trk);

/* Bytes of the log's allocations (chunks and track states), for
** messages. */
int64_t profsumBeLogBytes(const ProfsumBeLog *L);

/* Start reading track trk's events in file order (none for a track that
** has none). */
void profsumBeLogFirst(const ProfsumBeLog *L, int64_t trk, ProfsumBeCursor *c);

/* The next event of c in *ev: 1, or 0 after the last. */
int profsumBeLogNext(ProfsumBeCursor *c, ProfsumBeEv *ev);

/* Free track trk's events: it has none after (count 0). */
void profsumBeLogDrop(ProfsumBeLog *L, int64_t trk);

/* Free the log (NULL is a no-op). */
void profsumBeLogFree(ProfsumBeLog *L);

#endif /* PROFSUM_BELOG_H */
