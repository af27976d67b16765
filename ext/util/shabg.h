/*
** shabg.h — a file's SHA-256 hashed beside the caller's work, on a thread
** at the idle scheduling class, and finished by the caller (shabg.c).
*/
#ifndef PROFSUM_SHABG_H
#define PROFSUM_SHABG_H

#include "hash.h"

typedef struct ProfsumShaBg ProfsumShaBg;

/* Go on hashing the open file fd from byte iFrom to its end, after the
** state *pState (a copy is taken; NULL: a fresh digest, iFrom then 0).
** With bThread, a thread of the idle scheduling class does it in 256 KiB
** steps while a core would otherwise wait (best effort: when no thread can
** be started, or without bThread, all is left to profsumShaBgFinish).
** fd is not owned and must stay open until profsumShaBgFinish or
** profsumShaBgStop returned; it is read with pread() only, so another
** thread may read() it meanwhile.  zPath names the file in messages and
** must outlive the hash.  SQLITE_OK with *pp, or SQLITE_NOMEM. */
int profsumShaBgStart(int fd, const char *zPath, sqlite3_int64 iFrom,
                      const ProfsumSha256 *pState, int bThread, ProfsumShaBg **pp);

/* The same for the file zPath, which it opens (and closes with p): from
** its start, a fresh digest.  SQLITE_OK with *pp; SQLITE_CANTOPEN with
** *pzErr "'path': cannot open (reason)"; SQLITE_NOMEM. */
int profsumShaBgOpen(const char *zPath, int bThread, ProfsumShaBg **pp, char **pzErr);

/* Hash one step in the calling thread, unless the hash is done or
** another thread is hashing a step: 1 if it did, else 0.  For a thread
** that would wait anyway (it never waits here).  Safe from any thread but
** never beside profsumShaBgFinish or profsumShaBgStop. */
int profsumShaBgHelp(ProfsumShaBg *p);

/* Take the hashing over (the thread stops at its next step; the caller
** never waits for a thread that gets no time, beyond one step), hash the
** rest of the file in the calling thread, and free p.  zHex[65]: the
** digest; *pnEnd: the offset where the file ended (its size).  Errors: a
** read error (*pzErr "'path': read error at byte N (reason)"); p is freed
** in every case. */
int profsumShaBgFinish(ProfsumShaBg *p, char *zHex, sqlite3_int64 *pnEnd, char **pzErr);

/* Stop without a digest (an error path): the thread ends at its next
** step, p is freed.  NULL is a no-op. */
void profsumShaBgStop(ProfsumShaBg *p);

#endif
