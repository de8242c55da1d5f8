/*
 * pid_alive.c -- is a process on this node still there? Transports use it
 * to tell a dead same-node peer from a slow one without any help from the
 * peer (which, being dead, cannot answer).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "net/net.h"

int net_pid_gone(pid_t pid)
{
    if (pid <= 0)
        return 0;
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return 1;
    /* a killed child not yet reaped by its launcher daemon is a zombie */
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno == ENOENT;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r > 0) {
        buf[r] = 0;
        char *p = strrchr(buf, ')');
        if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
            return 1;
    }
    return 0;
}
