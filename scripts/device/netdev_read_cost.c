// What one reading of a network interface's traffic counters costs, three ways: the
// sampler's four sysfs files (statistics/{tx,rx}_{bytes,packets}, one pread each on open
// descriptors), one rtnetlink RTM_GETSTATS request for the interface's 64-bit link stats,
// and one pread of /proc/net/dev. Back to back (CPU per reading), then at a sampler's pace
// (clock_nanosleep to absolute deadlines, share of a core, against the same loop reading
// nothing). Needs only a C compiler, for the GPU machine:
//   cc -O2 scripts/device/netdev_read_cost.c -o nrc && ./nrc eth0 20000 1000 3000
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double Nanos(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static const char* kFiles[4] = {"tx_bytes", "rx_bytes", "tx_packets", "rx_packets"};
static int sysfs_fd[4];
static int nl_fd = -1;
static int proc_fd = -1;
static unsigned ifindex;
static uint64_t sink;

static int ReadSysfs(void) {
  char buf[32];
  for (int i = 0; i < 4; ++i) {
    ssize_t n = pread(sysfs_fd[i], buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    sink += strtoull(buf, NULL, 10);
  }
  return 1;
}

static int ReadNetlink(void) {
  struct {
    struct nlmsghdr h;
    struct if_stats_msg m;
  } req;
  memset(&req, 0, sizeof req);
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = RTM_GETSTATS;
  req.h.nlmsg_flags = NLM_F_REQUEST;
  req.m.family = AF_UNSPEC;
  req.m.ifindex = ifindex;
  req.m.filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
  if (send(nl_fd, &req, sizeof req, 0) < 0) return 0;
  char buf[1024];
  ssize_t n = recv(nl_fd, buf, sizeof buf, 0);
  if (n <= 0) return 0;
  struct nlmsghdr* h = (struct nlmsghdr*)buf;
  if (h->nlmsg_type != RTM_NEWSTATS) return 0;
  struct rtattr* a = (struct rtattr*)((char*)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct if_stats_msg)));
  int left = (int)h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct if_stats_msg)));
  for (; RTA_OK(a, left); a = RTA_NEXT(a, left))
    if (a->rta_type == IFLA_STATS_LINK_64) {
      const struct rtnl_link_stats64* s = RTA_DATA(a);
      sink += s->tx_bytes + s->rx_bytes + s->tx_packets + s->rx_packets;
      return 1;
    }
  return 0;
}

static int ReadProc(void) {
  static char buf[16384];
  ssize_t n = pread(proc_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = 0;
  sink += (uint64_t)n;
  return 1;
}

static int ReadNothing(void) { return 1; }

static void BackToBack(const char* name, int (*read)(void), int n) {
  if (!read()) {
    printf("%-10s cannot be read here\n", name);
    return;
  }
  const double cpu0 = Nanos(CLOCK_THREAD_CPUTIME_ID);
  for (int i = 0; i < n; ++i) read();
  printf("%-10s back to back: %.2f us of CPU per reading\n", name, (Nanos(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e3 / n);
}

static void Paced(const char* name, int (*read)(void), long hz, int wakeups) {
  if (!read()) return;
  const long period_ns = 1000000000L / hz;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  const double cpu0 = Nanos(CLOCK_THREAD_CPUTIME_ID);
  for (int i = 0; i < wakeups; ++i) {
    next.tv_nsec += period_ns;
    while (next.tv_nsec >= 1000000000) next.tv_nsec -= 1000000000, ++next.tv_sec;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    read();
  }
  const double per = (Nanos(CLOCK_THREAD_CPUTIME_ID) - cpu0) / wakeups;
  printf("%-10s at %ld Hz: %.2f us of CPU per tick, %.3f %% of a core\n", name, hz, per / 1e3,
         100.0 * per / (double)period_ns);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: netdev_read_cost IFACE READINGS HZ TICKS\n");
    return 64;
  }
  const char* iface = argv[1];
  const int readings = atoi(argv[2]), ticks = atoi(argv[4]);
  const long hz = atol(argv[3]);
  for (int i = 0; i < 4; ++i) {
    char path[256];
    snprintf(path, sizeof path, "/sys/class/net/%s/statistics/%s", iface, kFiles[i]);
    sysfs_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
  }
  ifindex = if_nametoindex(iface);
  nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  proc_fd = open("/proc/net/dev", O_RDONLY | O_CLOEXEC);
  struct {
    const char* name;
    int (*read)(void);
  } ways[] = {{"nothing", ReadNothing}, {"sysfs x4", ReadSysfs}, {"netlink", ReadNetlink}, {"proc", ReadProc}};
  const int n = sizeof ways / sizeof ways[0];
  for (int i = 1; i < n; ++i) BackToBack(ways[i].name, ways[i].read, readings);
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < n; ++i) Paced(ways[i].name, ways[i].read, hz, ticks);
  return sink == 42;  // keeps the reads
}
