/*
** find_int.h — what find.c (the walk, summary §1.1's pick, the table
** profsum_find_traces) and find_pick.c (the picks by the import options
** "session" and "hosts") share.  Internal to ext/reader; the import code
** uses find.h.
*/
#ifndef PROFSUM_FIND_INT_H
#define PROFSUM_FIND_INT_H

#include "find.h"

/* Formats, in §1.1 JSON preference order; index into azProfsumFindFormat. */
#define FIND_FMT_PERFETTO  0   /* perfetto_trace.json.gz */
#define FIND_FMT_TRACE_GZ  1   /* *.trace.json.gz */
#define FIND_FMT_TRACE     2   /* *.trace.json */
#define FIND_FMT_XPLANE    3   /* *.xplane.pb */
#define FIND_FMT_RIEGELI   4   /* *.xplane.riegeli: listed, never picked */
#define FIND_IS_JSON(e)    ((e)<=FIND_FMT_TRACE)   /* one of the JSON formats */
#define FIND_IS_READ(e)    ((e)<=FIND_FMT_XPLANE)  /* a format profsum reads */

/* One candidate file. */
typedef struct ProfsumFindRow ProfsumFindRow;
struct ProfsumFindRow {
  char *zPath;            /* Full path, sqlite3_malloc64'd, owned */
  int nPath;              /* strlen(zPath) */
  int iHost, nHost;       /* host = zPath[iHost..iHost+nHost); nHost<0: NULL */
  int iSession, nSession; /* session slice of zPath; nSession<0: NULL */
  int nDir;               /* length of the folder: zPath up to its last '/' */
  sqlite3_int64 iSize;    /* File size in bytes (target of a symlink) */
  int eFormat;            /* FIND_FMT_* */
};

/* An entry with a candidate's name (not *.xplane.riegeli) that is not a
** file, so not a row: the reference's search matches names alone, so it
** counts it, and fails reading it (a dangling link named *.xplane.pb
** alone makes it turn to the trace JSON). */
#define FIND_GHOST_DIR       0   /* a directory, or a symbolic link to one */
#define FIND_GHOST_DANGLING  1   /* a symbolic link that resolves to nothing */
#define FIND_GHOST_OTHER     2   /* a FIFO, socket or device, or a link to one */
typedef struct ProfsumFindGhost ProfsumFindGhost;
struct ProfsumFindGhost {
  char *zPath;            /* Full path, sqlite3_malloc64'd, owned */
  int eFormat;            /* FIND_FMT_* of its name (never FIND_FMT_RIEGELI) */
  int eKind;              /* FIND_GHOST_* */
};

/* How the reference came to its pick (ProfsumFindList.eRefWay). */
#define FIND_REF_XPLANE      0   /* its lone *.xplane.pb entry, a file */
#define FIND_REF_LONE_GHOST  1   /* its lone *.xplane.pb entry is not a file
                                 ** (nor a dangling link): it fails on it */
#define FIND_REF_JSON        2   /* the JSON step: iRefPick, or -1 when the
                                 ** entry it picks is not a file, or none */

/* The result of one walk: rows sorted by path, plus the two picks. */
typedef struct ProfsumFindList ProfsumFindList;
struct ProfsumFindList {
  ProfsumFindRow *aRow;   /* Rows, sqlite3_realloc64'd, owned */
  sqlite3_int64 nRow;     /* Rows in use */
  sqlite3_int64 nAlloc;   /* Rows allocated */
  sqlite3_int64 nXplane;  /* Rows with eFormat==FIND_FMT_XPLANE */
  sqlite3_int64 nRiegeli; /* Rows with eFormat==FIND_FMT_RIEGELI */
  int bXplaneBad;         /* the lone XPlane does not decode (§1.1 step 2) */
  sqlite3_int64 iPicked;  /* Index of the JSON pick, -1 if none */
  sqlite3_int64 iRefPick; /* Index of the reference pick, -1 if none (it
                          ** finds nothing, or fails on an entry that is
                          ** not a file) */
  ProfsumFindGhost *aGhost;  /* Non-file entries, sorted by path, owned */
  sqlite3_int64 nGhost, nGhostAlloc;
  sqlite3_int64 nGhostX;  /* Ghosts named *.xplane.pb */
  int eRefWay;            /* FIND_REF_*: how the reference picks */
  sqlite3_int64 iRefGhost;  /* The ghost behind eRefWay (LONE_GHOST: it;
                            ** JSON: the JSON entry it picks, if a ghost);
                            ** -1 if none */
};

/* Release everything a list owns and leave it empty (picks = none).
** Safe on a zeroed or already reset list. */
void profsumFindListReset(ProfsumFindList *pList);

/* Walk zDir (a NUL-terminated path, as given by the user) into pList, which
** must be empty (reset).  On success the rows are sorted and the picks set.
** On error pList is left empty and *pzErr holds a message without function
** prefix (sqlite3_malloc'd, caller frees; NULL for SQLITE_NOMEM).
** Returns SQLITE_OK, SQLITE_ERROR or SQLITE_NOMEM. */
int profsumFindCollect(const char *zDir, ProfsumFindList *pList, char **pzErr);

/* 1 when the XSpace file zPath decodes as the reference's protobuf parser
** decodes it, 0 when it does not, -1 when out of memory (find.c). */
int profsumFindXPlaneDecodes(const char *zPath);

/* What an error that found nothing to read adds when the folder holds
** *.xplane.riegeli files (static text; "" when it holds none). */
const char *profsumFindRiegeliHint(const ProfsumFindList *pList);

/* qsort order of two rows (pointers to ProfsumFindRow pointers) by
** folder, then by path. */
int profsumFindCmpDir(const void *pa, const void *pb);

/* 1 if rows a and b lie in the same folder. */
int profsumFindSameDir(const ProfsumFindRow *a, const ProfsumFindRow *b);

/* Mark in aSel (pList->nRow bytes, zeroed) the rows an import with the
** options zSession (0: the reference's) and hostsAll reads (find_pick.c).
** SQLITE_OK (nothing marked when nothing is found), SQLITE_ERROR with
** *pzErr (no such session: the message lists those found) or
** SQLITE_NOMEM.  zDir only names the folder in messages.  *ppS (when ppS
** is not 0): a row of the one session chosen by 'latest' or by name, else
** 0. */
int profsumFindSelect(const ProfsumFindList *pList, const char *zDir, const char *zSession,
                      int hostsAll, char *aSel, const ProfsumFindRow **ppS, char **pzErr);

#endif /* PROFSUM_FIND_INT_H */
