/*
 * vnfs-send — test tool: send raw bytes to the helper's socket and print
 * the reply, so guest suites can speak the protocol exactly (including
 * malformed and oversized messages) without a client library in between.
 *
 *   vnfs-send SOCKET 'JSON'        send JSON + "\n", print one reply line
 *   vnfs-send SOCKET --bytes N     send N bytes of 'x' (no newline), print reply
 *   vnfs-send SOCKET --stall S     connect, send nothing for S seconds, print reply
 * Exit status: 0 reply with "ok":true, 1 reply with "ok":false, 2 no reply.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(address.sun_path))
		return -1;
	memcpy(address.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
		fprintf(stderr, "vnfs-send: connect %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t sent = send(fd, data, length, MSG_NOSIGNAL);

		if (sent < 0)
			return errno == EPIPE || errno == ECONNRESET ? 0 : -1; /* the helper may cut us off */
		data += sent;
		length -= (size_t)sent;
	}
	return 0;
}

/* Reads until '\n', EOF or 10 s; prints what came. */
static int read_reply(int fd)
{
	static char reply[1 << 20];
	size_t used = 0;

	while (used < sizeof(reply) - 1) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t got;

		if (poll(&pfd, 1, 10000) <= 0)
			break;
		got = recv(fd, reply + used, sizeof(reply) - 1 - used, 0);
		if (got <= 0)
			break;
		used += (size_t)got;
		if (memchr(reply, '\n', used) != NULL)
			break;
	}
	reply[used] = '\0';
	if (used == 0) {
		fprintf(stderr, "vnfs-send: no reply\n");
		return 2;
	}
	fputs(reply, stdout);
	if (reply[used - 1] != '\n')
		putchar('\n');
	return strstr(reply, "\"ok\":true") || strstr(reply, "\"ok\": true") ? 0 : 1;
}

int main(int argc, char **argv)
{
	int fd, status;

	if (argc < 3) {
		fprintf(stderr, "usage: vnfs-send SOCKET JSON | --bytes N | --stall SECONDS\n");
		return 2;
	}
	fd = connect_to(argv[1]);
	if (fd < 0)
		return 2;
	if (strcmp(argv[2], "--bytes") == 0 && argc == 4) {
		size_t length = strtoul(argv[3], NULL, 10);
		char *junk = malloc(length);

		if (junk == NULL)
			return 2;
		memset(junk, 'x', length);
		status = send_all(fd, junk, length);
		free(junk);
	} else if (strcmp(argv[2], "--stall") == 0 && argc == 4) {
		sleep((unsigned)atoi(argv[3]));
		status = 0;
	} else {
		status = send_all(fd, argv[2], strlen(argv[2]));
		if (status == 0)
			status = send_all(fd, "\n", 1);
	}
	if (status != 0) {
		fprintf(stderr, "vnfs-send: send: %s\n", strerror(errno));
		close(fd);
		return 2;
	}
	status = read_reply(fd);
	close(fd);
	return status;
}
