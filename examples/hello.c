/* hello.c -- every rank says hello; rank 0 collects the greetings in order. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <vcoll.h>

int main(int argc, char **argv)
{
    int rc = vc_init(&argc, &argv);
    if (rc) {
        fprintf(stderr, "vc_init: %s\n", vc_strerror(rc));
        return 1;
    }
    int rank, size;
    vc_comm_rank(VC_COMM_WORLD, &rank);
    vc_comm_size(VC_COMM_WORLD, &size);

    char msg[128], host[64] = "?";
    gethostname(host, sizeof host);
    snprintf(msg, sizeof msg, "hello from rank %d of %d on %s (pid %d)", rank, size, host,
             (int)getpid());
    if (rank == 0) {
        printf("%s [%s]\n", msg, vc_version_string());
        for (int r = 1; r < size; r++) {
            vc_status_t st;
            rc = vc_recv(msg, sizeof msg, VC_BYTE, r, 0, VC_COMM_WORLD, &st);
            if (rc) {
                fprintf(stderr, "recv from %d: %s\n", r, vc_strerror(rc));
                return 1;
            }
            printf("%.*s\n", (int)st.bytes, msg);
        }
    } else {
        rc = vc_send(msg, strlen(msg), VC_BYTE, 0, 0, VC_COMM_WORLD);
        if (rc) {
            fprintf(stderr, "send: %s\n", vc_strerror(rc));
            return 1;
        }
    }
    return vc_finalize() ? 1 : 0;
}
