/* Passing a file descriptor with a message over a unix socket (SCM_RIGHTS): precordd hands a
 * recording to `precord ctl` this way, `precord ctl` a pidfd to precordd, and the recorder its
 * target's pidfds to the --lossless guardian. At most one fd travels with a message; a receiver
 * keeps the first one and closes any other, so a peer cannot leak descriptors into it. */
#ifndef PRECORD_LIB_FDPASS_H
#define PRECORD_LIB_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* Send len bytes of buf on sock with fd attached when fd >= 0 (the caller keeps its fd). flags
 * as sendmsg's; MSG_NOSIGNAL is always added. Returns the bytes sent or -errno. */
ssize_t fdpass__send(int sock, const void *buf, size_t len, int fd, int flags);

/* Receive up to len bytes into buf from sock. flags as recvmsg's; MSG_CMSG_CLOEXEC is always
 * added. The first fd passed with them goes to *ret_fd (-1 when none came), close-on-exec; any
 * other is closed. Returns the bytes received, 0 at the end of the stream, or -errno. */
ssize_t fdpass__recv(int sock, void *buf, size_t len, int *ret_fd, int flags);

#endif
