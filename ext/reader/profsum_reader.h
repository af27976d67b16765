/*
** profsum_reader.h — the reading pipeline: byte source (gz.c), streaming
** event scanner (trace_json.c) and track model (track.c).
**
**   file ─► ProfsumSrc (plain | gzip) ─► ProfsumScan ─► ProfsumEvent ...
**                                              └─► diagnostics callback
**   ProfsumScan ─► profsumTrackAnalyze() ─► ProfsumTrackInfo (per-event
**                  B/E durations, depth, parent, exclusive time; M names)
*/
#ifndef PROFSUM_READER_H
#define PROFSUM_READER_H

#include "profsum_int.h"

/* ===================================================================== */
/* Byte source (gz.c)                                                     */
/* ===================================================================== */
typedef struct ProfsumSrc ProfsumSrc;

/* Open zPath for reading.  Detects gzip by magic bytes.  Errors: missing
** file, permission denied, a directory, an empty file (*pzErr set,
** sqlite3_malloc'd, no function prefix). */
int profsumSrcOpenFile(const char *zPath, ProfsumSrc **pp, char **pzErr);

/* Open a memory buffer a[0..n) (not copied; must outlive the source).
** zName is used in messages. */
int profsumSrcOpenMem(const unsigned char *a, size_t n, const char *zName,
                      ProfsumSrc **pp, char **pzErr);

/* Read up to nOut decompressed bytes into aOut.  *pnGot==0 means end of
** data.  Errors: read errors, corrupt/truncated gzip, trailing garbage;
** SQLITE_INTERRUPT ("interrupted") when the stop check said stop. */
int profsumSrcRead(ProfsumSrc *p, unsigned char *aOut, size_t nOut,
                   size_t *pnGot, char **pzErr);
int profsumSrcIsGzip(ProfsumSrc *p);

/* May profsum start threads?  Not when SQLite was built single-threaded
** (its allocator has no mutex then) nor when PROFSUM_THREADS=0 is set in
** the environment (to compare, or where threads are unwelcome).  Used by
** the inflate thread here and by the first import's parse thread. */
int profsumThreadsAllowed(void);

/* Keep the source single-threaded: for callers that read only a prefix
** (a format sniff), where a producer thread would inflate megabytes ahead
** for nothing.  Call before the first profsumSrcRead(); later it is a
** no-op (the mode is decided by the first read). */
void profsumSrcNoThread(ProfsumSrc *p);

/* End the inflate thread, where there is one, and inflate in the reading
** thread from here on: for a reader that moves to a thread of its own
** whose other work leaves time for the inflating (the JSON scan pipe),
** where a third busy thread on two cores costs more than it overlaps.
** The bytes delivered are the same.  Call between two profsumSrcRead()
** calls, from the thread that reads (or before another takes over). */
void profsumSrcRingEnd(ProfsumSrc *p);

/* Hash the raw file bytes (SHA-256) as they are read.  Call before the
** first profsumSrcRead().  After the data was read to its end,
** profsumSrcHashHex() writes the 64 hex digits (+NUL) of the whole file
** (bytes the reader did not need are read and hashed then). */
int profsumSrcHashInit(ProfsumSrc *p);
int profsumSrcHashHex(ProfsumSrc *p, char *zHex);
/* Leave the hashing behind the reading, for threads that would wait to
** help with: from here on the reader hashes nothing, and the rest of the
** file, from the reader's position and digest state on, is hashed by a
** second read of the file (shabg.h): a step at a time by
** profsumSrcHashSome() from any thread, by a thread at the idle
** scheduling class, and the rest by profsumSrcHashHex().  The digest is
** the same.  Best effort: nothing changes for a source that does not
** hash, is in memory, is not a regular file (a pipe cannot be read
** twice), or whose inflate thread still reads (profsumSrcRingEnd first),
** or when memory is short.  Call between two profsumSrcRead() calls, from
** the thread that reads (or before another takes over). */
void profsumSrcHashBehind(ProfsumSrc *p);
/* Hash one step of the hash left behind, if there is one and no other
** thread is hashing: 1 if it did, else 0 (also for a source that left
** nothing behind).  Never blocks; safe from any thread until
** profsumSrcHashHex() or profsumSrcClose(). */
int profsumSrcHashSome(ProfsumSrc *p);
int64_t profsumSrcFileSize(ProfsumSrc *p);   /* bytes on disk */
int64_t profsumSrcRawPos(ProfsumSrc *p);     /* raw bytes consumed */
/* How busy inflating keeps a core: with an inflate thread, its CPU time
** for the bytes read so far over the time since it started (0 to about
** 1); 0 for a file that is not gzip; 1 for gzip inflated by the reader
** itself. */
double profsumSrcInflateShare(ProfsumSrc *p);
const char *profsumSrcPath(ProfsumSrc *p);
void profsumSrcClose(ProfsumSrc *p);         /* NULL is a no-op */

/* Stop checks: how a long read hears sqlite3_interrupt() (Ctrl-C in the
** shell, a notebook's stop button) or a parse thread's stop flag.  A
** source takes, when it is opened, the stop check set for the calling
** thread (profsumStopPush), and asks it before it delivers more data each
** time PROFSUM_STOP_BYTES bytes were delivered since it last asked: a
** non-zero answer fails that read, and every later one, with
** SQLITE_INTERRUPT and the message "interrupted" (the scanner puts the
** function's name before it).  Every reader goes through a source, so
** trace_events, profsum_diagnostics, the track pass, profsum_trim and the
** summary engine's read all stop within a few MB of data, whatever the
** file holds (rows or none, small entries or one huge one).  The check is
** taken at open time: a source opened in one call and read in later ones
** (a trace_events cursor) keeps it.  Set per thread, so the code that
** opens the source (the summary engine, the track pass) needs no
** parameter for it.
**
** profsumStopPush(): make (xStop, pArg) the calling thread's stop check;
**   returns the previous one, for profsumStopPop() to restore (they nest).
** profsumStopAsk(): ask the calling thread's stop check now (0 when none
**   is set): for long loops that read nothing, such as sorts. */
typedef int (*ProfsumStopCheckFn)(void *pArg);
typedef struct ProfsumStopCheck {
  ProfsumStopCheckFn xStop;   /* 0: no check */
  void *pArg;
} ProfsumStopCheck;
#define PROFSUM_STOP_BYTES (4*1024*1024)
ProfsumStopCheck profsumStopPush(ProfsumStopCheckFn xStop, void *pArg);
void profsumStopPop(ProfsumStopCheck prev);
int profsumStopAsk(void);
/* Give source p another stop check (for a source read by another thread
** than the one that opened it: the check it took may only be asked on that
** thread); returns the one it had. */
ProfsumStopCheck profsumSrcSetStop(ProfsumSrc *p, ProfsumStopCheck stop);

/* A file smaller than this on disk (about 35 MB of trace JSON gzipped) is
** read with smaller buffers: an inflate ring of 4 buffers instead of 8
** (gz.c) and a parse window of 64 KiB at first instead of 256 KiB
** (trace_json.c); they were no faster for it and held a large share of a
** small import's memory (docs/performance.md, "Small files"). */
#define PROFSUM_SMALL_FILE (4*1024*1024)

/* ===================================================================== */
/* Event scanner (trace_json.c)                                           */
/* ===================================================================== */

/* A span of JSON text inside the scanner's buffer.  Valid until the next
** profsumScanNext() call.  z==0: the key was absent. */
typedef struct ProfsumSpan {
  const char *z;        /* First byte of the value (a string: after the quote) */
  int64_t n;            /* Length in bytes (a string: without the quotes) */
  unsigned char type;   /* PROFSUM_JT_* of the JSON value */
  unsigned char flags;  /* PROFSUM_SF_* */
} ProfsumSpan;

#define PROFSUM_JT_NONE    0   /* absent */
#define PROFSUM_JT_NULL    1
#define PROFSUM_JT_TRUE    2
#define PROFSUM_JT_FALSE   3
#define PROFSUM_JT_NUMBER  4
#define PROFSUM_JT_STRING  5
#define PROFSUM_JT_ARRAY   6
#define PROFSUM_JT_OBJECT  7
#define PROFSUM_JT_NONFIN  8   /* bare NaN / Infinity / -Infinity */

#define PROFSUM_SF_ESCAPE  0x01  /* string contains backslash escapes */
#define PROFSUM_SF_CTRL    0x02  /* raw control characters in a string */
#define PROFSUM_SF_TRAIL   0x04  /* trailing comma inside the value */
#define PROFSUM_SF_NONFIN  0x08  /* bare NaN/Infinity inside the value */
#define PROFSUM_SF_DUPKEY  0x10  /* (args) a known key appeared twice */
#define PROFSUM_SF_BADUTF8 0x20  /* bytes that are not UTF-8 in a string (shown
                                 ** as U+FFFD: text columns stay valid UTF-8) */
#define PROFSUM_SF_SURR    0x40  /* a \u escape of the surrogate range
                                 ** (\ud800-\udfff) in a string: a hint,
                                 ** paired or not (profsumSpanLoneSurrogate
                                 ** tells) */
#define PROFSUM_SF_FIXUP   (PROFSUM_SF_CTRL|PROFSUM_SF_TRAIL|PROFSUM_SF_NONFIN|PROFSUM_SF_BADUTF8)

/* pid/tid value kinds */
#define PROFSUM_ID_ABSENT  0
#define PROFSUM_ID_INT     1   /* iVal */
#define PROFSUM_ID_TEXT    2   /* span (a string that is not an integer) */
#define PROFSUM_ID_NULL    3   /* JSON null, or unparsable (with diagnostic) */

typedef struct ProfsumId {
  int kind;             /* PROFSUM_ID_* */
  int64_t iVal;         /* value when kind==PROFSUM_ID_INT */
  int notJsonInt;       /* 1: not a JSON integer (a string, or 1.0 / 1e3),
                        ** which the reference's typed decoder rejects */
  int tooBig;           /* 1: an integer literal beyond the 64-bit range
                        ** (kind NULL, diagnostic id_out_of_range), which
                        ** the reference's decoder reads as a Python int */
  ProfsumSpan s;        /* the string when kind==PROFSUM_ID_TEXT */
} ProfsumId;

/* Known keys of args, extracted when PROFSUM_SCAN_ARGKEYS is set. */
#define PROFSUM_AK_TF_OP          0
#define PROFSUM_AK_HLO_OP         1
#define PROFSUM_AK_HLO_MODULE     2
#define PROFSUM_AK_HLO_CATEGORY   3
#define PROFSUM_AK_LONG_NAME      4
#define PROFSUM_AK_SOURCE         5
#define PROFSUM_AK_RUN_ID         6
#define PROFSUM_AK_STEP_NUM       7
#define PROFSUM_AK_FLOPS          8
#define PROFSUM_AK_BYTES_ACCESSED 9
#define PROFSUM_AK_CORRELATION_ID 10
#define PROFSUM_AK_GROUP_ID       11
#define PROFSUM_AK_NAME           12   /* args.name (M events) */
#define PROFSUM_AK_MODEL_FLOPS    13   /* the import's collectors (insights.h) */
#define PROFSUM_AK_KERNEL_DETAILS 14
#define PROFSUM_AK_COUNT          15

/* One traceEvents entry that is an object with a string "ph". */
typedef struct ProfsumEvent {
  int64_t idx;          /* 0-based entry index within traceEvents */
  int64_t iOffset;      /* byte offset of its '{' in the decompressed JSON */
  ProfsumSpan ph;       /* always a string; one written with an escape
                        ** that decodes to one ASCII character ("\u0058")
                        ** is given as that character (in aPhText) */
  char aPhText[8];      /* "\"c\"": the text of such a ph, quotes included */
  ProfsumSpan name;     /* string or absent (non-string: absent + diagnostic) */
  ProfsumSpan cat;
  ProfsumId pid, tid;
  int hasTs, hasDur;    /* 1 if ts / dur parsed exactly */
  int tsPresent;        /* 1 if the entry has a "ts" key (whatever its value) */
  int timesLater;       /* bit 1 (ts), 2 (dur): its value is still to be
                        ** made from the text at tsSpan.z / durSpan.z
                        ** (profsumScanTimesLater; profsumEventTimes);
                        ** 0 in every event a reader returns */
  profsum_ps ts;        /* exact picoseconds (absolute) */
  profsum_ps dur;       /* exact picoseconds */
  int timeNotNumber;    /* 1: ts or dur was a string or null (the reference's
                        ** typed decoder rejects the file for it) */
  int timeHuge;         /* a ts (1) or dur (2 positive, 4 negative) that is a
                        ** JSON number past every exact time (1e32 µs or
                        ** more) with a finite double: read by the reference,
                        ** no value here (hasTs/hasDur 0) */
  const char *zRefBad;  /* why the reference's typed decoder rejects the
                        ** entry, for a field only the scanner sees (a null
                        ** name, an event-level process_name / thread_name
                        ** that is not a string); NULL when none (static) */
  int typedBadField;    /* 1: a bad_field diagnostic of a field the
                        ** reference decodes typed (name, pid, tid, ts,
                        ** dur): its decoder rejects the file; not cat,
                        ** which it ignores */
  int tsRounded, durRounded;  /* 1: the text had more than 6 decimals, so
                        ** ts/dur are rounded; tsSpan/durSpan then hold the
                        ** text (profsumTextDouble gives Python's float()) */
  ProfsumSpan tsSpan, durSpan;
  uint64_t tsDigits, durDigits;  /* when rounded and not negative, if the
                        ** scanner had them: the text's decimal digits
                        ** (at most 19) as an integer, 0 when not; the
                        ** text is tsDigits·10^tsExp (profsumDecimalHint) */
  int tsExp, durExp;
  ProfsumSpan args;     /* raw JSON text of "args" (any type) */
  ProfsumSpan entries;  /* raw JSON text of "entries" (compact counters) */
  ProfsumSpan aArg[PROFSUM_AK_COUNT]; /* known args keys (ARGKEYS only) */
  ProfsumSpan raw;      /* the whole entry's JSON text, '{' to '}'; its
                        ** flags: the PROFSUM_SF_FIXUP defects the reader
                        ** tolerated in it (profsumSpanJson repairs them) */
  /* Set by the XPlane adapter only (xplane_rows.c); 0 / absent for JSON: */
  int64_t iTrack;       /* 1 + the ordinal of the event's line over the file
                        ** (each line is its own track); 0: the track is
                        ** (pid, tid) */
  ProfsumSpan procName, threadName;  /* the names (strings, no escapes)
                        ** when the format gives them per event; absent
                        ** for JSON (M events name processes and threads) */
} ProfsumEvent;

/* Diagnostic callback: idx is the entry index (-1: not tied to an entry),
** iOffset the byte offset in the decompressed JSON (-1 unknown).  zKind is
** a static string (see docs/trace_events.md); zDetail is transient, and
** NULL once more than PROFSUM_DIAG_DETAIL_CAP diagnostics of that kind
** were reported (the readers stop formatting them: count them only),
** unless the reader was opened with PROFSUM_SCAN_ALLDETAILS. */
typedef void (*ProfsumDiagFn)(void *pCtx, int64_t idx, int64_t iOffset,
                              const char *zKind, const char *zDetail);

#define PROFSUM_SCAN_ARGKEYS  0x01   /* fill ProfsumEvent.aArg[] */
#define PROFSUM_SCAN_ARGS     0x02   /* fill ProfsumEvent.args (the JSON
                                     ** scanner always does; the XPlane
                                     ** adapter builds it only when asked) */
#define PROFSUM_SCAN_MNAMES   0x04   /* (streams) what M-event names need:
                                     ** ARGKEYS for JSON, nothing for XPlane,
                                     ** whose rows carry their names */
/* Past this many diagnostics of one kind, the readers (JSON scanner,
** XPlane decoder and row adapter) no longer format details: xDiag gets
** zDetail == NULL (consumers that only count them, or keep a few, are
** spared the formatting of millions).  PROFSUM_SCAN_ALLDETAILS lifts it. */
#define PROFSUM_DIAG_DETAIL_CAP 1000
#define PROFSUM_SCAN_QUIETROUND 0x08 /* (JSON) past its cap of details, a
                                     ** time_rounded is only counted
                                     ** (profsumScanQuietRounded), not
                                     ** passed to xDiag one by one */
#define PROFSUM_SCAN_ALLDETAILS 0x10 /* every diagnostic gets its detail
                                     ** (no PROFSUM_DIAG_DETAIL_CAP; QUIETROUND
                                     ** then never applies): for those who
                                     ** list them all (profsum_diagnostics,
                                     ** store_diagnostics 'all') */
#define PROFSUM_SCAN_NOPH 0x20       /* (JSON) entries that are objects without
                                     ** a "ph" come out too (ph absent), so
                                     ** that the import can check their typed
                                     ** fields as the reference's decoder
                                     ** does; they are no rows of trace_events */
#define PROFSUM_SCAN_TOPMEMBERS 0x40 /* (JSON) keep the top-level object's other
                                     ** members (profsumScanTopCount) */

typedef struct ProfsumScan ProfsumScan;

/* Create a scanner over pSrc (ownership of pSrc passes to the scanner,
** also on error).  zFunc names the SQL function for messages.  xDiag may
** be NULL (diagnostics are then not even formatted). */
int profsumScanOpen(ProfsumSrc *pSrc, const char *zFunc, unsigned flags,
                    ProfsumDiagFn xDiag, void *pDiagCtx,
                    ProfsumScan **pp, char **pzErr);

/* Advance to the next row-producing event.  Returns SQLITE_ROW with *ppEv
** set (owned by the scanner, valid until the next call), SQLITE_DONE at
** the end, or an error code with *pzErr set (full message, prefixed with
** the function name). */
int profsumScanNext(ProfsumScan *p, ProfsumEvent **ppEv, char **pzErr);

/* Facts known after SQLITE_DONE. */
int64_t profsumScanEntries(ProfsumScan *p);      /* traceEvents entries
                                                 ** (those of skipped arrays,
                                                 ** profsumScanSkipArrays, not
                                                 ** counted) */
int profsumScanEventArrays(ProfsumScan *p);      /* traceEvents arrays met (a
                                                 ** key given more than once) */
int profsumScanIsArrayForm(ProfsumScan *p);      /* 1: the bare-array form */
int64_t profsumScanBytes(ProfsumScan *p);        /* decompressed bytes */
const char *profsumScanDisplayTimeUnit(ProfsumScan *p); /* or NULL */
ProfsumSrc *profsumScanSrc(ProfsumScan *p);
/* With PROFSUM_SCAN_QUIETROUND: the time_rounded diagnostics counted and
** not passed to xDiag (all past the cap of details; xDiag got the first
** PROFSUM_DIAG_DETAIL_CAP).  Any time, 0 without the flag. */
int64_t profsumScanQuietRounded(ProfsumScan *p);
/* With PROFSUM_SCAN_TOPMEMBERS, after SQLITE_DONE: the members of the
** top-level object other than traceEvents (displayTimeUnit among them), in
** file order, a repeated key at the place of its first time with its last
** value (as a JSON decoder keeping the last reads it).  Member i: its key
** (decoded, NUL-terminated) and its value's JSON text as the file writes
** it (*pnVal bytes, NUL-terminated).  Kept at most: PROFSUM_TOP_MAX
** members, keys of PROFSUM_TOP_KEY_MAX bytes, values of PROFSUM_TOP_VAL_MAX
** bytes; a member past a limit is not kept (a trace's metadata is small:
** device properties, versions, a rank; a long log array is left out). */
#define PROFSUM_TOP_MAX 64
#define PROFSUM_TOP_KEY_MAX 128
#define PROFSUM_TOP_VAL_MAX 65536
int profsumScanTopCount(ProfsumScan *p);
/* Member i, 0 <= i < profsumScanTopCount(p); the texts stay the scanner's
** until profsumScanClose.  Read them only once the scanning ended: after
** SQLITE_DONE, and with a pipe (profsumScanPipeOpen) after
** profsumScanPipeClose. */
void profsumScanTopAt(ProfsumScan *p, int i, const char **pzKey, const char **pzVal, int *pnVal);
void profsumScanClose(ProfsumScan *p);           /* NULL is a no-op */

/* For a reader of the scanner on another thread (scanpipe.c).  A window
** swap: give the scanner a buffer of nNew bytes holding aOld[iFrom..
** iFrom+nKeep) at its start, and take aOld (nOld bytes), whose bytes the events
** scanned so far point into (free it once they were used); NULL when no
** buffer can be had (aOld stays the scanner's, which fails with
** SQLITE_NOMEM). */
typedef unsigned char *(*ProfsumWindowSwapFn)(void *pCtx, unsigned char *aOld, size_t nOld,
                                              size_t iFrom, size_t nKeep, size_t nNew);
/* Before the first profsumScanNext: every refill takes a new window from
** xSwap instead of moving the bytes left within the one it has, so the
** spans of the events already returned stay valid until the one who
** supplied xSwap frees their windows. */
void profsumScanHoldWindows(ProfsumScan *p, ProfsumWindowSwapFn xSwap, void *pCtx);
/* Send the diagnostics to xDiag (with pCtx) from now on; xDiag must be
** NULL exactly when the one given to profsumScanOpen was (the scanner's
** work depends on whether there is one). */
void profsumScanSetDiag(ProfsumScan *p, ProfsumDiagFn xDiag, void *pCtx);
/* Parse the next events into *pEv, whose aArg spans set are the bits of
** *pArgSet (the scanner zeroes those, and notes there the ones it sets
** once another target is set): *pEv and *pArgSet zeroed at first, then
** left as the scanner left them.
** profsumScanNext returns pEv then.  NULL: the scanner's own event again.
** May be called from within a ProfsumWindowSwapFn: the entry being
** parsed is parsed again from its start after a refill. */
void profsumScanSetTarget(ProfsumScan *p, ProfsumEvent *pEv, unsigned *pArgSet);
/* With on = 1 (and the SIMD tokenizer, and windows held: profsumScanHoldWindows),
** a ts or dur of the common shape (digits, a point, 1 to 23 decimals, the
** whole within 32 bytes of a window that holds 40 from its start) is
** checked and its diagnostics decided while it is scanned, but its value
** made later, by profsumEventTimes on the reader's side: the scanning
** thread is the pipe's slower side, the reader's has time.  The events
** come out with timesLater set until then. */
void profsumScanTimesLater(ProfsumScan *p, int on);
/* The ts and dur of ev left for later (ev->timesLater), made as the
** scanner would have made them (the same digits, the same conversion);
** timesLater is 0 after. */
void profsumEventTimes(ProfsumEvent *ev);

/* A reader of a scanner's events on another thread (scanpipe.c): the
** scanning runs ahead while the caller handles the events it has.
** Opened on a scanner before its first profsumScanNext, or between two
** (once the caller is done with the event the last one returned);
** afterwards profsumScanPipeNext replaces profsumScanNext, with the same results
** (rows, diagnostics in the same order, errors, the stop check of the
** source; zFunc names the SQL function in messages), the diagnostics
** passed to xDiag on the caller's thread just before the event they were
** reported with (or the next one).  *pp is
** NULL (and SQLITE_OK returned) where no pipe is made: threads not
** allowed (profsumThreadsAllowed), or the second core is better left to
** the inflating (profsumScanPipeWanted), unless PROFSUM_SCAN_PIPE=1
** asks for one all the same (=0: never).  SQLITE_NOMEM when there is no
** memory for it. */
typedef struct ProfsumScanPipe ProfsumScanPipe;
/* Whether scanning on a thread of its own pays, asked between two
** profsumScanNext calls: 1 yes, 0 no, -1 not known yet (ask again after
** the next event).  Known once PROFSUM_PIPE_PROBE bytes were scanned (a
** trace smaller than that is done before a thread would help).  On two
** CPUs (profsumCpusUsable): yes when inflating kept a core busy less than
** PROFSUM_PIPE_SHARE of the time (profsumSrcInflateShare: so for a file
** that is not gzip), where the second core has time for the scanning;
** above, the inflating and the scanning together fill that core, and the
** split costs more than it gains (docs/performance-log.md, "When the
** scanning thread pays").  On three or more, each busy thread has a core
** of its own: yes unless inflating alone kept a core nearly busy
** (PROFSUM_PIPE_SHARE_MANY).  On one: no.  PROFSUM_SCAN_PIPE=1 says yes
** at once, =0 no. */
#define PROFSUM_PIPE_PROBE (16*1024*1024)
#define PROFSUM_PIPE_SHARE 0.4
#define PROFSUM_PIPE_SHARE_MANY 0.9
int profsumScanPipeWanted(ProfsumScan *pScan);
/* Whether the scanning thread, once it starts, should also do the
** inflating (profsumSrcRingEnd) rather than leave it to the inflate
** thread: on two CPUs, yes when inflating kept a core busy less than
** PROFSUM_HANDBACK_SHARE of the time so far, where the scanning thread has
** time for it and three busy threads on two cores wait on each other more
** than they overlap; above, the scanning thread would become the slower
** side.  On three or more CPUs, no: the inflate thread has a core of its
** own.  PROFSUM_SCAN_INFLATES=1 says yes, =0 no. */
#define PROFSUM_HANDBACK_SHARE 0.25
int profsumScanInflatesWanted(ProfsumScan *pScan);
int profsumScanPipeOpen(ProfsumScan *pScan, const char *zFunc, ProfsumDiagFn xDiag,
                        void *pDiagCtx, ProfsumScanPipe **pp);
/* profsumScanNext's answer for the next event: *ppEv valid until the
** next call. */
int profsumScanPipeNext(ProfsumScanPipe *p, ProfsumEvent **ppEv, char **pzErr);
/* Stop the scanning thread (where it did not end) and free the pipe; the
** scanner's facts (profsumScanEntries, ...) may be read afterwards, and
** it is still the caller's to close.  NULL is a no-op. */
void profsumScanPipeClose(ProfsumScanPipe *p);

/* Before the first profsumScanNext: the first n traceEvents arrays of the
** top-level object (a key given n+1 times) are read past, their entries
** neither rows nor counted nor diagnosed (their indexes are skipped, so
** that later entries keep the indexes trace_events gives them): what a
** JSON decoder that keeps a repeated key's last value reads, as the
** reference's does. */
void profsumScanSkipArrays(ProfsumScan *p, int n);

/* Decode the JSON string span s into UTF-8 (escapes resolved, lone
** surrogates → U+FFFD).  Spans without escapes are returned as-is.  The
** result is written to *pzOut and *pnOut, using *ppBuf and *pnBuf (grown with
** sqlite3_realloc64) as scratch when decoding is needed. */
int profsumSpanText(const ProfsumSpan *s, char **ppBuf, int64_t *pnBuf,
                    const char **pzOut, int64_t *pnOut);

/* 1 when the JSON string span s holds a lone surrogate escape (a \ud800-
** \udbff not followed by an escape of \udc00-\udfff, or a \udc00-\udfff
** not preceded by one), which a strict JSON decoder (the reference's
** msgspec) rejects and profsumSpanText reads as U+FFFD; else 0.  Reads
** the escapes of the span's text only: cheap to call on spans with
** PROFSUM_SF_SURR, which any lone surrogate escape sets. */
int profsumSpanLoneSurrogate(const ProfsumSpan *s);

/* Is the span a string whose decoded text is zLit[0..nLit) (nLit at most
** 42)?  Escapes are decoded as a JSON decoder does ("process\u005fname" is
** "process_name"), without allocating. */
int profsumSpanIs(const ProfsumSpan *s, const char *zLit, int64_t nLit);

/* The string span s decoded (as profsumSpanText) into a[0..nA), without
** allocating: its length, or -1 when a may be too small (it needs room for
** 3*s->n+1 bytes). */
int64_t profsumSpanDecodeInto(const ProfsumSpan *s, char *a, int64_t nA);

/* Render a JSON value span as valid JSON: returns the span itself when it
** needs no fix-up, else a repaired copy in the scratch buffer (trailing
** commas removed, raw control characters escaped, bare NaN/Infinity turned
** into strings). */
int profsumSpanJson(const ProfsumSpan *s, char **ppBuf, int64_t *pnBuf,
                    const char **pzOut, int64_t *pnOut);

/* Parse the span (a JSON number, or a string holding one) as an exact
** picosecond time given in microseconds.  Returns 0 on success; 1 on
** success with rounding (more than 6 decimals); -1 when unparsable. */
int profsumParseMicros(const char *z, int64_t n, profsum_ps *pOut);

/* The nearest double to the decimal number text z[0..n), as strtod (and
** Python's float()) give it; dHint: a likely answer (checked exactly, and
** returned when right, faster), or NAN. */
double profsumTextDouble(const char *z, int64_t n, double dHint);

/* The nearest double to ±w·10^k (0 < w < 10^19, -19 <= k <= 0; neg: the
** sign) when it is dHint or dHint's neighbour on the value's side, found
** by exact integer arithmetic: 1 with *pOut set, else 0 (then
** profsumTextDouble decides).  Step 1 of profsumTextDouble. */
int profsumDecimalHint(uint64_t w, int k, int neg, double dHint, double *pOut);

/* For X > 0 computed in extended precision with a relative error of at
** most 2^-63: set *pOut to the double nearest to the exact value and
** return 1, or return 0 when X is too near a midpoint to tell (or long
** double is not the x87 80-bit type). */
int profsumLdToDouble(long double X, double *pOut);

/* Parse an integer span (number or integer string).  Returns 0 on success,
** -1 when the text is not an integer within int64. */
int profsumParseInt(const char *z, int64_t n, int64_t *pOut);

/* ===================================================================== */
/* Event streams (evstream.c): one reader over either input format        */
/* ===================================================================== */
/* The formats trace_events, the track pass and profsum_trim read. */
#define PROFSUM_FMT_JSON    0   /* Chrome trace JSON (trace_json.c) */
#define PROFSUM_FMT_XPLANE  1   /* an XSpace protobuf (xplane_rows.c) */
#define PROFSUM_FMT_NOMEM  -1   /* profsumSniffFormat ran out of memory */
#define PROFSUM_FMT_UNKNOWN -2   /* profsumSniffContent: the content cannot tell */

/* The format of zPath, told by its content (docs/trace_events.md, "Input
** formats"): the decompressed data's first byte after an optional UTF-8
** BOM and whitespace is '{' or '[' → JSON; else a name ending in
** ".xplane.pb" or ".xplane.pb.gz" → XPlane; else a first byte that is an
** XSpace field key of a length-delimited field (0x0A planes, 0x12 errors,
** 0x1A warnings) → XPlane; else JSON (whose scanner then reports what is
** wrong).  A file that cannot be opened or read (missing, empty, damaged
** gzip) goes by its name alone: the real open then reports the error, or
** reads an empty XSpace; so does anything but a regular file (a pipe's
** bytes can be read only once).  Reads at most 4 KiB of data.  Returns
** PROFSUM_FMT_NOMEM when it ran out of memory. */
int profsumSniffFormat(const char *zPath);

/* profsumSniffFormat by the content alone, for messages about what a file
** is: PROFSUM_FMT_UNKNOWN where profsumSniffFormat would go by the name
** (not a regular file, cannot be opened or read, empty). */
int profsumSniffContent(const char *zPath);

/* What profsum says of .xplane.riegeli files wherever it meets them: what
** they are, and what to read instead. */
#define PROFSUM_RIEGELI_WHAT "(XSpace chunks in Riegeli records)"
#define PROFSUM_RIEGELI_INSTEAD "read the capture's .xplane.pb or trace JSON"

/* Refuse a file of a format profsum knows but does not read yet: a name
** ending in ".xplane.riegeli" (XSpace chunks in Riegeli records, which the
** profiler writes when it saves in chunks).  Returns SQLITE_OK for any
** other name; else SQLITE_ERROR with *pzErr = "<zFunc>: '<zPath>': ... is
** not supported yet ..." (0 when out of memory).  Every reader of a file
** given by name calls it first: trace_events, profsum_diagnostics,
** profsum_trim and the track pass (profsumStreamOpen), profsum_import and
** the CLI (profsumEngineParse), profsum_xplane_planes/_lines. */
int profsumRefuseUnsupported(const char *zFunc, const char *zPath, char **pzErr);

typedef struct ProfsumStream ProfsumStream;

/* Open zPath as a stream of ProfsumEvent rows in the format that
** profsumSniffFormat() gives.  JSON: profsumSrcOpenFile + profsumScanOpen
** (flags are the scanner's); XPlane: the adapter of xplane_rows.c (flags
** PROFSUM_SCAN_ARGKEYS, PROFSUM_SCAN_ARGS, PROFSUM_SCAN_ALLDETAILS; xDiag
** also gets the adapter's own diagnostics).  Errors: *pzErr set, prefixed with zFunc (0 with
** SQLITE_NOMEM when even the message could not be made). */
int profsumStreamOpen(const char *zFunc, const char *zPath, unsigned flags,
                      ProfsumDiagFn xDiag, void *pDiagCtx,
                      ProfsumStream **pp, char **pzErr);
/* As profsumScanNext. */
int profsumStreamNext(ProfsumStream *p, ProfsumEvent **ppEv, char **pzErr);
int profsumStreamFormat(ProfsumStream *p);        /* PROFSUM_FMT_* */
/* The JSON scanner (display time unit, array form, ...), or 0 for XPlane. */
ProfsumScan *profsumStreamScan(ProfsumStream *p);
/* After SQLITE_DONE: JSON traceEvents entries, or XEvents of an XPlane. */
int64_t profsumStreamEntries(ProfsumStream *p);
void profsumStreamClose(ProfsumStream *p);        /* NULL is a no-op */

/* ===================================================================== */
/* Track model (track.c)                                                  */
/* ===================================================================== */

#define PROFSUM_NEED_DUR    0x01   /* durations of B slices (B/E pairing) */
#define PROFSUM_NEED_TRACK  0x02   /* depth, parent_idx, excl */
#define PROFSUM_NEED_NAMES  0x04   /* process/thread names from M events */
#define PROFSUM_NEED_DIAG   0x08   /* track-level diagnostics, and every
                                   ** reader diagnostic with its detail
                                   ** (PROFSUM_SCAN_ALLDETAILS) */
#define PROFSUM_NEED_EXCLNS 0x10   /* the excl column (ns-domain sweep) */

/* Per-event results of the first pass, in file order (only events that
** need something: B, E and X rows when NEED_DUR/NEED_TRACK). */
typedef struct ProfsumTrackRec {
  int64_t idx;          /* entry index */
  int64_t iOffset;      /* byte offset of the event */
  profsum_ps ts;        /* start (exact ps) */
  int64_t dur;          /* duration in ps; -1 if none (E, unmatched B) */
  int64_t excl;         /* exclusive ps; -1 if not on a track */
  union {
    int64_t exclNs;     /* exclusive time in the ns domain (see track.c) */
    int64_t beginIdx;   /* E records: entry index of the B it closes; -1
                        ** when it closes none */
  };
  int64_t parent;       /* parent entry index; -1 at roots / none */
  int32_t depth;        /* nesting depth; -1 if not on a track */
  int32_t trk;          /* track id (interned (pid,tid)) */
  uint32_t nameHash;    /* hash of the name (0 = none) for B/E checks */
  char ph;              /* 'X', 'B' or 'E' */
} ProfsumTrackRec;

typedef struct ProfsumNameMap ProfsumNameMap;

/* The records are kept in blocks of PROFSUM_TRK_BLOCK, so that no single
** allocation grows with the trace (SQLite allocates less than 2 GiB at a
** time: one array of 80-byte records stopped near 25 million events).
** A build may set PROFSUM_TRK_BLOCK_LOG (the tests' small-block build). */
#ifndef PROFSUM_TRK_BLOCK_LOG
# define PROFSUM_TRK_BLOCK_LOG 16          /* 65,536 records (5 MiB) a block */
#endif
#define PROFSUM_TRK_BLOCK ((int64_t)1<<PROFSUM_TRK_BLOCK_LOG)

typedef struct ProfsumTrackInfo {
  ProfsumTrackRec **apRec;  /* records in file order, in blocks (profsumTrackRec) */
  int64_t nRec;
  ProfsumNameMap *pNames;   /* M-event names (NEED_NAMES) */
  int64_t nEntries;         /* traceEvents entries */
  int64_t nRows;            /* rows (events with a string ph) */
  int64_t nX;               /* ph == X rows */
  int64_t nAccepted;        /* X rows accepted by summary-v1 §1.3 */
} ProfsumTrackInfo;

/* Record i (0 <= i < nRec) of p. */
static inline ProfsumTrackRec *profsumTrackRec(const ProfsumTrackInfo *p, int64_t i){
  return &p->apRec[i>>PROFSUM_TRK_BLOCK_LOG][i & (PROFSUM_TRK_BLOCK-1)];
}

/* Run the first pass over zPath: collect what `needs` asks for, pair B/E,
** compute nesting and exclusive time per track.  xDiag receives scanner
** and (with NEED_DIAG) track diagnostics.  On error *pzErr is set
** (prefixed with zFunc, naming the file: out of memory included); the pass
** stops at the calling thread's stop check (profsumStopPush) with
** SQLITE_INTERRUPT, in its reads and between the sorts of its runs. */
int profsumTrackAnalyze(const char *zFunc, const char *zPath, unsigned needs,
                        ProfsumDiagFn xDiag, void *pDiagCtx,
                        ProfsumTrackInfo **pp, char **pzErr);
void profsumTrackFree(ProfsumTrackInfo *p);

/* The track diagnostics of one read pass that a caller makes itself (an
** import's): the rows profsumTrackAnalyze gives with NEED_DIAG besides the
** reader's and partial_overlap (which needs the nesting pass), with the
** same idx, offset, kind and detail: unknown_ph, zero_duration,
** negative_duration, time_out_of_range of a slice, the B/E pairing
** (unmatched_begin, unmatched_end, mismatched_end) and
** suspected_truncation.  Open (SQLITE_OK or SQLITE_NOMEM; zFunc, zPath
** and pDiagCtx must outlive the object), hand it every event with a
** string ph in file order (Event: SQLITE_OK, or an error code with
** profsumTrackDiagErr set), then Finish once (the pairing diagnostics and
** the end-of-file ones; SQLITE_OK, or SQLITE_NOMEM / SQLITE_INTERRUPT
** with the error set); Free in every case.  Memory: the B and E events
** in a compact log per track until Finish (belog.h: about 8 bytes an
** event in ordinary traces), and while Finish pairs a track whose events
** did not come in (ts, file) order, 40 bytes per event of that track. */
typedef struct ProfsumTrackDiag ProfsumTrackDiag;
int profsumTrackDiagOpen(const char *zFunc, const char *zPath, ProfsumDiagFn xDiag,
                         void *pDiagCtx, ProfsumTrackDiag **pp);
int profsumTrackDiagEvent(ProfsumTrackDiag *d, const ProfsumEvent *ev);
int profsumTrackDiagFinish(ProfsumTrackDiag *d);
const char *profsumTrackDiagErr(const ProfsumTrackDiag *d);
void profsumTrackDiagFree(ProfsumTrackDiag *d);

/* Look up the M-event name of a process (tid==NULL) or thread.  Returns
** the decoded name or NULL. */
const char *profsumNameLookup(ProfsumNameMap *p, const ProfsumId *pid,
                              const ProfsumId *tid, int64_t *pn);

#endif /* PROFSUM_READER_H */
