/*
** xplane_pb.h — a streaming decoder of XSpace protobuf files
** (<host>.xplane.pb, package tensorflow.profiler, proto3), without a
** protobuf library.
**
** Walk (pull style, one object at a time, nothing materialized beyond the
** current plane's metadata maps):
**
**   ProfsumXp *p;
**   profsumXpOpen("my_func", zPath, 0, xDiag, pCtx, &p, &zErr);
**   while( profsumXpNextPlane(p, &pPlane, &zErr)==SQLITE_ROW ){
**     while( profsumXpNextLine(p, &pLine, &zErr)==SQLITE_ROW ){
**       while( profsumXpNextEvent(p, &pEv, &zErr)==SQLITE_ROW ){ ... }
**     }
**   }
**   ... check each rc for an error (anything but SQLITE_ROW / SQLITE_DONE) ...
**   profsumXpStrings(p, PROFSUM_XP_HOSTNAMES, &aHost, &nHost);
**   profsumXpClose(p);
**
** Each plane is walked twice: first its non-line fields (id, name, the
** event_metadata and stat_metadata maps, its stats: encoders write them
** after the lines), then its lines.  Each line is walked twice too: first
** its own fields (display_name and display_id come after the events on
** the wire) and the count of its events, then its events.  A consumer may
** stop early at any level: asking for the next plane (line) finishes the
** current one, counting the events left (event ordinals stay those of the
** file), with only the structure (tags and lengths) of what it skips
** checked.
**
** Input: a plain file is read with pread() through a window (no mmap: a
** file that shrinks while it is read is an error, never a SIGBUS); memory
** is the current plane's metadata, plus the window: 256 KiB, a whole line
** up to 1 MiB, or the largest single event.  Large bytes values of a
** plane's metadata (PROFSUM_XP_LAZY_MIN and over: the HLO protos JAX
** embeds in /host:metadata) stay in the file until profsumXpStatText
** reads one.  A gzip file
** (.xplane.pb.gz, detected by its magic bytes) is inflated as a stream:
** each plane's bytes are then held in memory while it is walked.  A 0-byte
** file is an empty XSpace.
**
** Lifetimes: a ProfsumXpPlane (and its metadata, names, stats) is valid
** until the next profsumXpNextPlane(); a ProfsumXpLine until the next
** profsumXpNextLine() or profsumXpNextPlane(); a ProfsumXpEvent (and the
** bytes of its own stats) until the next call of any Next function.
**
** Errors (the decode errors of protobuf's own parser, and I/O) are returned
** as SQLite codes with *pzErr set (sqlite3_malloc'd), e.g.
**   "<zFunc>: '<path>': byte 1234 (plane 2, line 0, event 17, XStat):
**    truncated varint"
** Byte offsets are offsets in the file (in the decompressed data for a
** gzip file).  After an error every Next function returns it again.
** See docs/xplane.md for the format as read and for every rule.
*/
#ifndef PROFSUM_XPLANE_PB_H
#define PROFSUM_XPLANE_PB_H

#include "profsum_int.h"
#include "profsum_reader.h"   /* ProfsumDiagFn */

/* Open flags. */
#define PROFSUM_XP_LENIENT_UTF8 0x01  /* invalid UTF-8 in a string field is
                                      ** read with U+FFFD (one per maximal
                                      ** invalid subsequence, as Python's
                                      ** errors="replace") and reported to
                                      ** the diagnostic callback, instead of
                                      ** failing the file as protobuf does */
#define PROFSUM_XP_ALLDETAILS   0x02  /* every diagnostic gets its detail (by
                                      ** default the first
                                      ** PROFSUM_DIAG_DETAIL_CAP of a kind) */

/* Kinds of an XStat value: the member of its `value` oneof that came last
** on the wire. */
#define PROFSUM_XV_NONE    0   /* no value member */
#define PROFSUM_XV_DOUBLE  1   /* double_value (2): rVal */
#define PROFSUM_XV_UINT64  2   /* uint64_value (3): uVal */
#define PROFSUM_XV_INT64   3   /* int64_value (4): iVal */
#define PROFSUM_XV_STR     4   /* str_value (5): z/n, valid UTF-8 */
#define PROFSUM_XV_BYTES   5   /* bytes_value (6): z/n, any bytes */
#define PROFSUM_XV_REF     6   /* ref_value (7): uVal is the key; z/n the
                               ** name of that XStatMetadata, z==0 when the
                               ** plane has no such key */
#define PROFSUM_XV_CSTR    7   /* compressed_str_value (8): z/n are the
                               ** compressed bytes; profsumXpStatText()
                               ** inflates them */

/* One XStat. */
typedef struct ProfsumXpStat {
  int64_t metadataId;     /* XStat.metadata_id: a stat_metadata key */
  const char *zName;      /* that XStatMetadata's name, or 0: no such key */
  int64_t nName;
  int eType;              /* PROFSUM_XV_* */
  double rVal;            /* DOUBLE */
  uint64_t uVal;          /* UINT64, REF */
  int64_t iVal;           /* INT64 */
  const char *z;          /* STR, BYTES, REF, CSTR (see above) */
  int64_t n;
  int64_t iOffset;        /* byte offset of the stat's tag */
  /* The value as a reader whose schema stops at ref_value (7) sees it:
  ** the member of fields 2 to 7 that came last (PROFSUM_XV_NONE: none).
  ** It differs from eType only when compressed_str_value came after it;
  ** then zPre/nPre hold that member's text (STR, BYTES; REF: the
  ** referenced name, or zPre==0), as z/n would (profsumXpStatRef). */
  int eRefType;
  const char *zPre;
  int64_t nPre;
  int cstrBad;            /* CSTR that does not inflate within the bound:
                          ** no value (its diagnostic was sent when the
                          ** stat was decoded) */
  /* BYTES of a plane's stat or of its event metadata's, read from a plain
  ** file, of PROFSUM_XP_LAZY_MIN bytes or more (the HLO protos of
  ** /host:metadata): left in the file, z==0, their offset in iLazyOff;
  ** profsumXpStatText reads them when asked. */
  int isLazy;
  int64_t iLazyOff;
} ProfsumXpStat;

/* One entry of a plane's event_metadata map. */
typedef struct ProfsumXpEventMeta {
  int64_t key;            /* the map key (events refer to it) */
  int64_t id;             /* XEventMetadata.id (normally == key) */
  const char *zName;      /* name (never 0; "" when absent) */
  int64_t nName;
  const char *zDisplay;   /* display_name (never 0) */
  int64_t nDisplay;
  const unsigned char *aMeta;  /* metadata: serialized extra bytes; 0 when
                               ** they were left in a plain file (as a lazy
                               ** BYTES stat is: PROFSUM_XP_LAZY_MIN bytes or
                               ** more; nothing reads them) */
  int64_t nMeta;
  const ProfsumXpStat *aStat;  /* stats, in wire order */
  int nStat;
  const int64_t *aChild;  /* child_id, in wire order */
  int64_t nChild;
  int64_t iOffset;        /* byte offset of the map entry's tag */
  int64_t iMeta;          /* its index among the plane's entries, 0 to
                          ** nEventMetadata-1: a reader keeps what it
                          ** derives from an entry in a per-plane array */
} ProfsumXpEventMeta;

/* One XPlane (its non-line fields; the lines come from NextLine). */
typedef struct ProfsumXpPlane {
  int64_t iPlane;         /* 0-based, file order */
  int64_t iOffset;        /* byte offset of the plane's tag */
  int64_t nBytes;         /* length of the plane message */
  int64_t id;             /* XPlane.id */
  const char *zName;      /* XPlane.name (never 0) */
  int64_t nName;
  int64_t nLines;         /* XLine entries */
  int64_t nEventMetadata; /* event_metadata entries (distinct keys) */
  int64_t nStatMetadata;  /* stat_metadata entries (distinct keys) */
  const ProfsumXpStat *aStat;  /* plane stats (field 6), wire order */
  int nStat;
  int64_t iFirstEvent;    /* ordinal of the plane's first event */
  int64_t nEvents;        /* events of its lines: complete once its lines
                          ** were walked (or skipped by the next plane) */
} ProfsumXpPlane;

/* One XLine. */
typedef struct ProfsumXpLine {
  int64_t iLine;          /* 0-based within its plane */
  int64_t iOffset;        /* byte offset of the line's tag */
  int64_t id;
  int64_t displayId;
  const char *zName;      /* never 0 */
  int64_t nName;
  const char *zDisplay;   /* display_name, never 0 */
  int64_t nDisplay;
  int64_t timestampNs;
  int64_t durationPs;
  int64_t nEvents;        /* XEvent entries of the line */
  int64_t iFirstEvent;    /* ordinal of its first event */
} ProfsumXpLine;

/* The `data` oneof of an XEvent. */
#define PROFSUM_XD_NONE         0   /* neither member present */
#define PROFSUM_XD_OFFSET       1   /* offset_ps (2): a timeline event */
#define PROFSUM_XD_OCCURRENCES  2   /* num_occurrences (5): an aggregate */

/* One XEvent, names resolved through its plane's maps. */
typedef struct ProfsumXpEvent {
  int64_t iEvent;         /* ordinal: 0-based over all planes and lines */
  int64_t iLineEvent;     /* 0-based within its line */
  int64_t iOffset;        /* byte offset of the event's tag */
  int64_t metadataId;
  const ProfsumXpEventMeta *pMeta;  /* 0: the plane has no such key */
  const char *zName;      /* pMeta's name, "" without pMeta */
  int64_t nName;
  const char *zDisplay;   /* pMeta's display_name, "" without pMeta */
  int64_t nDisplay;
  int eData;              /* PROFSUM_XD_* */
  int64_t offsetPs;       /* XD_OFFSET */
  int64_t numOccurrences; /* XD_OCCURRENCES */
  int64_t durationPs;
  const ProfsumXpStat *aStat;  /* the event's own stats, wire order
                               ** (its metadata's come first: pMeta->aStat) */
  int nStat;
  const ProfsumXpLine *pLine;
  const ProfsumXpPlane *pPlane;
} ProfsumXpEvent;

typedef struct ProfsumXp ProfsumXp;

/* Open zPath.  zFunc names the SQL function in messages (a static
** string).  flags: PROFSUM_XP_*.  xDiag (may be 0) receives diagnostics
** (kinds: unknown_field, wrong_wire_type, invalid_utf8,
** compressed_too_large, compressed_invalid; idx = the event ordinal or -1;
** iOffset = the byte offset); after PROFSUM_DIAG_DETAIL_CAP of one kind
** its detail is 0, unless flags has PROFSUM_XP_ALLDETAILS.
** Errors: missing file, a directory, a read error (*pzErr set). */
int profsumXpOpen(const char *zFunc, const char *zPath, unsigned flags,
                  ProfsumDiagFn xDiag, void *pDiagCtx,
                  ProfsumXp **pp, char **pzErr);

/* The same over a[0..n) in memory (not copied: it must outlive the
** decoder; gzip bytes are inflated like a file).  zName is used in
** messages. */
int profsumXpOpenMem(const char *zFunc, const unsigned char *a, int64_t n,
                     const char *zName, unsigned flags,
                     ProfsumDiagFn xDiag, void *pDiagCtx,
                     ProfsumXp **pp, char **pzErr);

/* The next plane: SQLITE_ROW (*pp set), SQLITE_DONE after the last, or an
** error code with *pzErr set. */
int profsumXpNextPlane(ProfsumXp *p, const ProfsumXpPlane **pp, char **pzErr);
/* The next line of the current plane: SQLITE_ROW, SQLITE_DONE, or error. */
int profsumXpNextLine(ProfsumXp *p, const ProfsumXpLine **pp, char **pzErr);
/* The next event of the current line: SQLITE_ROW, SQLITE_DONE, or error. */
int profsumXpNextEvent(ProfsumXp *p, const ProfsumXpEvent **pp, char **pzErr);

/* The current plane's maps (valid until the next plane).  Lookup by key:
** 0 when absent.  EventMetaAt: entries in first-appearance order, i in
** [0, nEventMetadata). */
const ProfsumXpEventMeta *profsumXpEventMeta(ProfsumXp *p, int64_t key);
const ProfsumXpEventMeta *profsumXpEventMetaAt(ProfsumXp *p, int64_t i);
const char *profsumXpStatMetaName(ProfsumXp *p, int64_t key, int64_t *pnName);

/* Bytes values of a plane's metadata and stats this long or longer are
** left in a plain file (ProfsumXpStat.isLazy).  (Can be set at compile
** time: the tests make it tiny, so that small inputs take that path.) */
#ifndef PROFSUM_XP_LAZY_MIN
# define PROFSUM_XP_LAZY_MIN (64*1024)
#endif

/* Largest inflated compressed_str_value (beyond: omitted, diagnostic). */
#define PROFSUM_XP_MAX_INFLATE (16*1024*1024)

/* Stat s as a reader whose schema stops at ref_value (7) sees it (the
** summary's reference, for which compressed_str_value is an unknown
** field): s itself when its last value member is not a compressed
** string; 0 when no other value member came before it (no value); else
** *pView, made a copy of s with that earlier member. */
const ProfsumXpStat *profsumXpStatRef(const ProfsumXpStat *s, ProfsumXpStat *pView);

/* A stat's value as text (for STR, BYTES, REF, CSTR; 0 for the others):
** STR as stored; BYTES with U+FFFD for invalid UTF-8; REF the referenced
** name, or the key in decimal when there is no such stat metadata; CSTR
** inflated (gzip or zlib), U+FFFD for invalid UTF-8.  For STR, and for
** a REF whose metadata exists (s->z set), *pz is s->z itself, valid as
** long as the stat; any other text may be in a buffer of the decoder's,
** valid until the next call.  Returns SQLITE_OK; *pz==0
** means "no value": a CSTR that inflates to more than
** PROFSUM_XP_MAX_INFLATE bytes or is not valid compressed data (a
** diagnostic is sent).  SQLITE_NOMEM when out of memory; reading a lazy
** BYTES value (isLazy) may also fail with PROFSUM_RC_FILEIO (a read error,
** or the file shrank): then the decoder's sticky error is set, with its
** message, and profsumXpErrMsg gives a copy of it. */
int profsumXpStatText(ProfsumXp *p, const ProfsumXpStat *s,
                      const char **pz, int64_t *pn);

/* XSpace's repeated strings (complete once NextPlane returned SQLITE_DONE:
** encoders write them after the planes). */
#define PROFSUM_XP_ERRORS    0
#define PROFSUM_XP_WARNINGS  1
#define PROFSUM_XP_HOSTNAMES 2
typedef struct ProfsumXpStr { const char *z; int64_t n; } ProfsumXpStr;
void profsumXpStrings(ProfsumXp *p, int eWhich, const ProfsumXpStr **pa, int64_t *pn);
/* Append the strings of kind eWhich (above) to s as a JSON array of
** strings, e.g. the hostnames as ["host-0","host-1"].  (In xplane_rows.c,
** with the other XPlane-to-SQL shapes: the decoder itself writes no JSON.) */
void profsumXpStringsJson(ProfsumXp *p, int eWhich, sqlite3_str *s);

/* A copy of the sticky error's message (sqlite3_malloc'd), or 0. */
char *profsumXpErrMsg(ProfsumXp *p);
int64_t profsumXpEventsSeen(ProfsumXp *p);   /* events walked or skipped */
int profsumXpIsGzip(ProfsumXp *p);
const char *profsumXpPath(ProfsumXp *p);
void profsumXpClose(ProfsumXp *p);           /* 0 is a no-op */

#endif /* PROFSUM_XPLANE_PB_H */
