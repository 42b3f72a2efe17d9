// SPDX-License-Identifier: GPL-2.0
package wpstat.clients;

import java.io.File;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.PutMessageStatus;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.logfile.MappedFile;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

/**
 * RocketMQ's own store (rocketmq-store, pinned in pom.xml), driven without a
 * broker: a DefaultMessageStore with flushDiskType ASYNC_FLUSH, so the
 * commit log is written by CommitLog#asyncPutMessage -> DefaultMappedFile#
 * appendMessagesInner, its files are made (and, with --warm on, warmed) by
 * AllocateMappedFileService, and flushed by RocketMQ's own threads:
 * FlushRealTimeService (MappedByteBuffer.force = msync, every
 * flushIntervalCommitLog = 500 ms with flushCommitLogTimed) or, with
 * --transient-pool on, CommitRealTimeService (DefaultMappedFile#commit0:
 * FileChannel.write after position() = write(2), every commitIntervalCommitLog = 200 ms)
 * followed by FileChannel.force(false) = fdatasync(2).
 *
 * One JVM runs --rounds rounds, each on a fresh store in DIR/rN, and prints
 * one JSON line per round on stdout.  The commit-log files are left in place
 * (the caller reads their counters, then removes DIR).  A monitor thread
 * samples the file's flushed and committed positions every millisecond to
 * count RocketMQ's flushes and commits (each advances its position, and two
 * are always more than 1 ms apart).  A flush is seen when it ends (the
 * position is set after force() returns): "flushes" are those that ended
 * while the appends ran, "flushes_total" adds those that ended later,
 * during shutdown().
 */
public final class RocketmqAppend {
	private static final int PAGE = 4096;

	private RocketmqAppend() {
	}

	private static String arg(String[] args, String name, String def) {
		for (int i = 0; i + 1 < args.length; i++)
			if (args[i].equals(name))
				return args[i + 1];
		return def;
	}

	private static boolean onOff(String v, String name) {
		if (v.equals("on"))
			return true;
		if (v.equals("off"))
			return false;
		throw new IllegalArgumentException(name + " must be on or off, not " + v);
	}

	private static int size(String v) {
		long mul = 1;
		char c = v.charAt(v.length() - 1);
		if (c == 'K' || c == 'k')
			mul = 1024;
		else if (c == 'M' || c == 'm')
			mul = 1024 * 1024;
		if (mul != 1)
			v = v.substring(0, v.length() - 1);
		return Math.toIntExact(Long.parseLong(v) * mul);
	}

	/** What the monitor thread saw of the round's first commit-log file. */
	private static final class Monitor extends Thread {
		private final DefaultMessageStore store;
		private final AtomicBoolean stop = new AtomicBoolean();
		volatile int flushes;
		volatile int commits;
		/** The file's wrote position when the first flush was first seen (-1: none). */
		volatile long firstFlushWrote = -1;

		Monitor(DefaultMessageStore store) {
			super("wpstat-monitor");
			setDaemon(true);
			this.store = store;
		}

		@Override
		public void run() {
			while (!stop.get()) {
				poll();
				try {
					Thread.sleep(1);
				} catch (InterruptedException e) {
					return;
				}
			}
		}

		private int lastFlushed, lastCommitted;

		void poll() {
			MappedFile mf = store.getCommitLog().getMappedFileQueue().getFirstMappedFile();
			if (mf == null)
				return;
			int f = mf.getFlushedPosition(), c = mf.getReadPosition(); // the committed position with the pool
			if (f != lastFlushed) {
				if (flushes == 0)
					firstFlushWrote = mf.getWrotePosition();
				flushes++;
				lastFlushed = f;
			}
			if (c != lastCommitted) {
				commits++;
				lastCommitted = c;
			}
		}

		void finish() throws InterruptedException {
			stop.set(true);
			join();
			poll();
		}
	}

	private static long pct(long[] sorted, double p) {
		int i = (int) Math.ceil(p * sorted.length) - 1;
		return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
	}

	public static void main(String[] args) throws Exception {
		String dir = arg(args, "--dir", null);
		if (dir == null)
			throw new IllegalArgumentException("--dir is required");
		int messages = Integer.parseInt(arg(args, "--messages", "3000"));
		int msgSize = size(arg(args, "--size", "1024"));
		boolean warm = onOff(arg(args, "--warm", "off"), "--warm");
		boolean pool = onOff(arg(args, "--transient-pool", "off"), "--transient-pool");
		int fileSize = size(arg(args, "--file-size", "16M"));
		int rounds = Integer.parseInt(arg(args, "--rounds", "1"));
		int poolSize = Integer.parseInt(arg(args, "--pool-size", "2"));
		// A producer's pace: the next put starts PACE us after the last
		// one began (0: back to back), so that a round spans several of
		// RocketMQ's 500 ms flushes whatever the machine's speed.
		long paceNs = Long.parseLong(arg(args, "--pace-us", "0")) * 1000;

		byte[] body = new byte[msgSize];
		Arrays.fill(body, (byte) 'm');
		InetSocketAddress host = new InetSocketAddress("127.0.0.1", 10911);

		for (int r = 0; r < rounds; r++) {
			String root = dir + "/r" + r;
			MessageStoreConfig cfg = new MessageStoreConfig();
			cfg.setStorePathRootDir(root);
			cfg.setStorePathCommitLog(root + File.separator + "commitlog");
			cfg.setMappedFileSizeCommitLog(fileSize);
			cfg.setFlushDiskType(FlushDiskType.ASYNC_FLUSH);
			cfg.setWarmMapedFileEnable(warm);
			cfg.setTransientStorePoolEnable(pool);
			cfg.setTransientStorePoolSize(poolSize);
			// Smaller side files than a broker's: the consume queue
			// (mmap, 20 B per message) and no index file (420 MB sparse
			// by default); neither is the commit log measured here.
			cfg.setMappedFileSizeConsumeQueue(100000 * 20);
			cfg.setMessageIndexEnable(false);
			cfg.setHaListenPort(0);
			BrokerConfig broker = new BrokerConfig();
			DefaultMessageStore store = new DefaultMessageStore(cfg,
				new BrokerStatsManager("wpstat", true), null, broker,
				new ConcurrentHashMap<>());
			if (!store.load())
				throw new IllegalStateException("DefaultMessageStore.load failed in " + root);
			store.start();
			long startNs = System.nanoTime();
			Monitor mon = new Monitor(store);
			mon.start();

			long[] lat = new long[messages];
			long bytes = 0;
			long t0 = System.nanoTime();
			for (int i = 0; i < messages; i++) {
				MessageExtBrokerInner m = new MessageExtBrokerInner();
				m.setTopic("wpstat");
				m.setTags("t");
				m.setBody(body);
				m.setQueueId(0);
				m.setBornTimestamp(System.currentTimeMillis());
				m.setBornHost(host);
				m.setStoreHost(host);
				m.setPropertiesString(MessageDecoder.messageProperties2String(m.getProperties()));
				if (paceNs > 0) {
					long due = t0 + i * paceNs;
					for (long now; (now = System.nanoTime()) < due; )
						LockSupport.parkNanos(due - now);
				}
				long a = System.nanoTime();
				PutMessageResult res = store.putMessage(m);
				lat[i] = System.nanoTime() - a;
				if (res.getPutMessageStatus() != PutMessageStatus.PUT_OK)
					throw new IllegalStateException("message " + i + ": " + res.getPutMessageStatus());
				bytes += res.getAppendMessageResult().getWroteBytes();
			}
			long elapsed = System.nanoTime() - t0;
			int flushesAtEnd = mon.flushes;
			long storeMs = (System.nanoTime() - startNs) / 1000000;

			List<MappedFile> files = new ArrayList<>(store.getCommitLog().getMappedFileQueue().getMappedFiles());
			StringBuilder fj = new StringBuilder();
			for (MappedFile mf : files) {
				if (fj.length() > 0)
					fj.append(',');
				long wrote = mf.getWrotePosition();
				fj.append(String.format("{\"path\":\"%s\",\"file_size\":%d,\"wrote\":%d,\"pages\":%d}",
					mf.getFileName(), mf.getFileSize(), wrote, (wrote + PAGE - 1) / PAGE));
			}
			// shutdown() ends FlushRealTimeService with flush(0) until
			// nothing is left: a flush still running, and that last one,
			// count in flushes_total (the monitor runs on through it).
			store.shutdown();
			mon.finish();

			// The first put waits for AllocateMappedFileService to make
			// (and warm) the file: its latency is reported apart too.
			long maxRest = 0;
			for (int i = 1; i < lat.length; i++)
				maxRest = Math.max(maxRest, lat[i]);
			long[] s = lat.clone();
			Arrays.sort(s);
			long ffw = mon.firstFlushWrote;
			System.out.println(String.format(
				"{\"round\":%d,\"warm\":\"%s\",\"transient_pool\":\"%s\",\"flush\":\"ASYNC_FLUSH\","
					+ "\"messages\":%d,\"size\":%d,\"bytes\":%d,\"file_size\":%d,\"elapsed_ns\":%d,"
					+ "\"store_ms\":%d,\"p50_ns\":%d,\"p99_ns\":%d,\"max_ns\":%d,\"first_ns\":%d,\"max_rest_ns\":%d,"
					+ "\"pace_us\":%d,\"flushes\":%d,\"flushes_total\":%d,\"commits\":%s,\"first_flush_wrote\":%d,"
					+ "\"first_flush_page\":%d,\"files\":[%s]}",
				r, warm ? "on" : "off", pool ? "on" : "off", messages, msgSize, bytes, fileSize,
				elapsed, storeMs, pct(s, 0.50), pct(s, 0.99), s[s.length - 1], lat[0], maxRest,
				paceNs / 1000, flushesAtEnd, mon.flushes, pool ? Integer.toString(mon.commits) : "null", ffw, ffw < 0 ? -1 : (ffw + PAGE - 1) / PAGE, fj));
			System.out.flush();
		}
		// RocketMQ's non-daemon service threads are stopped by shutdown();
		// exit anyway, so a straggler cannot keep the JVM (and the test) alive.
		System.exit(0);
	}
}
