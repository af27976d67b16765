/*
** curl_lazy.h — libcurl, opened at the first network call.
**
** Linking libcurl makes every load of profsum.so map and relocate libcurl
** and its ~30 dependencies (TLS, HTTP/2, LDAP, Kerberos, ...): most of the
** time of a `.load` (docs/performance.md), paid by every sqlite3 shell,
** notebook and CLI run that never touches the network.  So the extension
** is built against libcurl's headers (pkg-config libcurl) but not linked
** to it: profsumCurlLoad() dlopen()s libcurl.so.4 once, when a W&B function
** first runs, and fills a table of entry points.  The macros below make the
** curl_* calls of the W&B code (http.c, wandb_publish.c) go through that
** table unchanged.  profsum_debug() only asks profsumCurlLoadedVersion(),
** which opens nothing.
** PROFSUM_LIBCURL=/path/to/libcurl.so in the environment opens that file
** instead (and only it).
**
** Built with PROFSUM_OMIT_NETWORK (make NETWORK=0) this header is empty.
*/
#ifndef PROFSUM_CURL_LAZY_H
#define PROFSUM_CURL_LAZY_H
#ifndef PROFSUM_OMIT_NETWORK

/* The type-checking macros of curl.h would hide the names redefined below. */
#ifndef CURL_DISABLE_TYPECHECK
# define CURL_DISABLE_TYPECHECK 1
#endif
#include <curl/curl.h>

/* The libcurl entry points profsum uses, typed from curl.h itself. */
typedef struct ProfsumCurlApi {
  __typeof__(curl_global_init)   *global_init;
  __typeof__(curl_version)       *version;
  __typeof__(curl_free)          *free;
  __typeof__(curl_easy_init)     *easy_init;
  __typeof__(curl_easy_setopt)   *easy_setopt;
  __typeof__(curl_easy_perform)  *easy_perform;
  __typeof__(curl_easy_getinfo)  *easy_getinfo;
  __typeof__(curl_easy_strerror) *easy_strerror;
  __typeof__(curl_easy_cleanup)  *easy_cleanup;
  __typeof__(curl_easy_reset)    *easy_reset;
  __typeof__(curl_slist_append)  *slist_append;
  __typeof__(curl_slist_free_all) *slist_free_all;
  __typeof__(curl_url)           *url;
  __typeof__(curl_url_set)       *url_set;
  __typeof__(curl_url_get)       *url_get;
  __typeof__(curl_url_cleanup)   *url_cleanup;
} ProfsumCurlApi;

extern ProfsumCurlApi profsumCurl;

/*
** Open libcurl and run curl_global_init(CURL_GLOBAL_DEFAULT), once per
** process (pthread_once: safe from any thread).  Returns 0 when the table
** above is usable, else a static text saying why (library not found, a
** missing symbol, or curl_global_init's error), the same on every call.
*/
const char *profsumCurlLoad(void);

/*
** The version text of libcurl (curl_version()) when an earlier
** profsumCurlLoad() in this process opened and initialised it, else 0.
** Never opens anything: profsum_debug(), which may run from a view of an
** untrusted database, uses this so that it maps no library into the
** process.  Safe from any thread.
*/
const char *profsumCurlLoadedVersion(void);

/* curl.h defines these two as function-like macros (an argument count
** check) that name the functions themselves. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init    (*profsumCurl.global_init)
#define curl_version        (*profsumCurl.version)
#define curl_free           (*profsumCurl.free)
#define curl_easy_init      (*profsumCurl.easy_init)
#define curl_easy_setopt    (*profsumCurl.easy_setopt)
#define curl_easy_perform   (*profsumCurl.easy_perform)
#define curl_easy_getinfo   (*profsumCurl.easy_getinfo)
#define curl_easy_strerror  (*profsumCurl.easy_strerror)
#define curl_easy_cleanup   (*profsumCurl.easy_cleanup)
#define curl_easy_reset     (*profsumCurl.easy_reset)
#define curl_slist_append   (*profsumCurl.slist_append)
#define curl_slist_free_all (*profsumCurl.slist_free_all)
#define curl_url            (*profsumCurl.url)
#define curl_url_set        (*profsumCurl.url_set)
#define curl_url_get        (*profsumCurl.url_get)
#define curl_url_cleanup    (*profsumCurl.url_cleanup)

#endif /* !PROFSUM_OMIT_NETWORK */
#endif /* PROFSUM_CURL_LAZY_H */
