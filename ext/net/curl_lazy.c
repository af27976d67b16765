/*
** curl_lazy.c — open libcurl on first use; see curl_lazy.h for why.
*/
#include "curl_lazy.h"

#ifndef PROFSUM_OMIT_NETWORK
#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ProfsumCurlApi profsumCurl;

static pthread_once_t curlOnce = PTHREAD_ONCE_INIT;
static const char *curlErr = "libcurl was not opened";
static char curlErrBuf[300];
static atomic_int curlReady;   /* 1 once profsumCurl is usable (release) */

/* pthread_once body: dlopen, resolve every entry point, global init. */
static void curlOpen(void){
  /* Debian's libcurl4 (OpenSSL) and libcurl3-gnutls both provide an ABI-4
  ** library; the unversioned name only exists with a -dev package. */
  static const char *azLib[] = { "libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so" };
  static const struct { const char *zName; size_t iOff; } aSym[] = {
#define CURL_SYM(f) { "curl_" #f, offsetof(ProfsumCurlApi, f) }
    CURL_SYM(global_init), CURL_SYM(version), CURL_SYM(free), CURL_SYM(easy_init),
    CURL_SYM(easy_setopt), CURL_SYM(easy_perform), CURL_SYM(easy_getinfo),
    CURL_SYM(easy_strerror), CURL_SYM(easy_cleanup), CURL_SYM(easy_reset),
    CURL_SYM(slist_append), CURL_SYM(slist_free_all), CURL_SYM(url), CURL_SYM(url_set),
    CURL_SYM(url_get), CURL_SYM(url_cleanup),
#undef CURL_SYM
  };
  ProfsumCurlApi api;
  void *h = 0;
  size_t i;
  CURLcode rc;
  const char *zEnv = getenv("PROFSUM_LIBCURL");   /* a libcurl of one's own */
  if( zEnv && zEnv[0] ){
    h = dlopen(zEnv, RTLD_NOW|RTLD_LOCAL);
    if( h==0 ){
      const char *z = dlerror();
      snprintf(curlErrBuf, sizeof(curlErrBuf), "cannot open libcurl at PROFSUM_LIBCURL=%s: %s",
               zEnv, z ? z : "not found");
      curlErr = curlErrBuf;
      return;
    }
  }
  for(i=0; h==0 && i<sizeof(azLib)/sizeof(azLib[0]); i++){
    h = dlopen(azLib[i], RTLD_NOW|RTLD_LOCAL);
  }
  if( h==0 ){
    const char *z = dlerror();
    snprintf(curlErrBuf, sizeof(curlErrBuf),
             "cannot open libcurl (libcurl.so.4: install it with 'apt-get install libcurl4'): %s",
             z ? z : "not found");
    curlErr = curlErrBuf;
    return;
  }
  memset(&api, 0, sizeof(api));
  for(i=0; i<sizeof(aSym)/sizeof(aSym[0]); i++){
    void *p = dlsym(h, aSym[i].zName);
    if( p==0 ){
      snprintf(curlErrBuf, sizeof(curlErrBuf), "libcurl has no %s (libcurl 7.62 or later is needed)",
               aSym[i].zName);
      curlErr = curlErrBuf;
      dlclose(h);
      return;
    }
    memcpy((char*)&api + aSym[i].iOff, &p, sizeof(p));
  }
  profsumCurl = api;
  rc = profsumCurl.global_init(CURL_GLOBAL_DEFAULT);
  if( rc!=CURLE_OK ){
    snprintf(curlErrBuf, sizeof(curlErrBuf), "libcurl initialisation failed: %s",
             profsumCurl.easy_strerror(rc));
    curlErr = curlErrBuf;
    return;        /* the library stays open: it may hold state */
  }
  curlErr = 0;
  atomic_store_explicit(&curlReady, 1, memory_order_release);
}

/* See curl_lazy.h. */
const char *profsumCurlLoad(void){
  pthread_once(&curlOnce, curlOpen);
  return curlErr;
}

/* See curl_lazy.h.  Reads the flag curlOpen() sets last; never calls
** pthread_once (which would open the library). */
const char *profsumCurlLoadedVersion(void){
  if( atomic_load_explicit(&curlReady, memory_order_acquire)==0 ) return 0;
  return profsumCurl.version();
}

#endif /* !PROFSUM_OMIT_NETWORK */
