// SPDX-License-Identifier: GPL-2.0
package wpstat.clients;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

/**
 * Appends messages to a Chronicle Queue (chronicle-queue 5.22.28) and prints
 * one line of JSON on stdout.
 *
 * <pre>
 * ChronicleAppend --dir D [--messages N] [--size S] [--pretouch on|off]
 *                 [--pretouch-every K] [--fsync-after M] [--roll FAST_DAILY]
 *                 [--block-size BYTES]
 * </pre>
 *
 * The appender is Chronicle's own: {@code ExcerptAppender.writeBytes}
 * (StoreAppender#writeBytes), which writes into the cycle file's mapping
 * (MappedFile chunks, blockSize + blockSize/4 overlap, shared by every
 * MappedBytes of the file in this process).  With {@code --pretouch on} the
 * appender's own {@code pretouch()} (StoreAppender#pretouch, which runs a
 * {@code Pretoucher}, i.e. PretoucherState#pretouch: a
 * {@code compareAndSwapLong(page, 0, 0)} on every page from the write
 * position to 1 MiB ahead) is called twice before the first message (the
 * first call only records the position) and again every K messages
 * (default 0: never again), on the appender's thread as the Javadoc asks.
 * {@code --fsync-after M}: after message M, fdatasync(2) the cycle file
 * (FileChannel.force(false)), as a writeback in the middle of the appends,
 * then append the rest.  Chronicle itself never syncs at this version.
 *
 * The clock is fixed (SetTimeProvider, 2026-01-01T12:00Z) so the cycle file
 * is always 20260101F.cq4 and never rolls during a run.
 *
 * If /proc/wpstat/inodes is readable (root, module loaded), the counters of
 * the cycle file are read around every phase and the deltas printed in
 * "phases": pretouch (every pretouch() call before the fsync), append,
 * fsync, pretouch_after and append_after (the same after it).
 */
public final class ChronicleAppend {
    private static final long FIXED_MS = 1767268800000L; // 2026-01-01T12:00:00Z
    private static final String[] COLUMNS = {
        "mkwrite_first", "mkwrite_wp", "mkclean_calls", "dirtied"
    };

    private ChronicleAppend() { }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new LinkedHashMap<>();
        opt.put("--dir", null);
        opt.put("--messages", "1024");
        opt.put("--size", "1020");
        opt.put("--pretouch", "off");
        opt.put("--pretouch-every", "0");
        opt.put("--fsync-after", "0");
        opt.put("--roll", "FAST_DAILY");
        opt.put("--block-size", "0");
        for (int i = 0; i < args.length; i += 2) {
            if (!opt.containsKey(args[i]) || i + 1 >= args.length)
                usage("bad argument " + args[i]);
            opt.put(args[i], args[i + 1]);
        }
        if (opt.get("--dir") == null)
            usage("--dir is required");
        final int messages = Integer.parseInt(opt.get("--messages"));
        final int size = Integer.parseInt(opt.get("--size"));
        final boolean pretouch = parseOnOff(opt.get("--pretouch"));
        final int pretouchEvery = Integer.parseInt(opt.get("--pretouch-every"));
        final int fsyncAfter = Integer.parseInt(opt.get("--fsync-after"));
        final long blockSize = Long.parseLong(opt.get("--block-size"));

        SingleChronicleQueueBuilder b = SingleChronicleQueueBuilder.binary(new File(opt.get("--dir")))
                .rollCycle(RollCycles.valueOf(opt.get("--roll")))
                .timeProvider(new SetTimeProvider(FIXED_MS * 1_000_000L));
        if (blockSize > 0)
            b.blockSize(blockSize);

        byte[] payload = new byte[size];
        Arrays.fill(payload, (byte) 'w');
        Bytes<?> msg = Bytes.allocateDirect(size);
        msg.write(payload);

        long[] lat = new long[messages];
        Map<String, long[]> phases = new LinkedHashMap<>();
        TreeSet<String> files = new TreeSet<>();
        long startPos;
        long endPos;
        long fsyncPos = -1;
        long t0;
        long elapsed;
        Path cycleFile;
        try (SingleChronicleQueue q = b.build()) {
            ExcerptAppender app = q.acquireAppender();
            cycleFile = Paths.get(q.fileAbsolutePath(), q.rollCycle().format()
                    .replace("'F'", "F").replace("'L'", "L").replace("'X'", "X")
                    .replace("yyyyMMdd", "20260101") + ".cq4");
            Probe probe = new Probe(cycleFile);
            t0 = System.nanoTime();
            if (pretouch) {
                probe.begin();
                app.pretouch(); // creates the store, records the position
                app.pretouch(); // touches up to position + 1 MiB
                probe.end(phases, "pretouch");
            }
            startPos = -1;
            boolean after = false;
            for (int i = 0; i < messages; i++) {
                if (pretouch && pretouchEvery > 0 && i > 0 && i % pretouchEvery == 0) {
                    probe.begin();
                    app.pretouch();
                    probe.end(phases, after ? "pretouch_after" : "pretouch");
                }
                probe.begin();
                long s = System.nanoTime();
                app.writeBytes(msg);
                lat[i] = System.nanoTime() - s;
                probe.end(phases, after ? "append_after" : "append");
                if (startPos < 0)
                    startPos = app.wire().bytes().writePosition();
                if (fsyncAfter > 0 && i + 1 == fsyncAfter) {
                    fsyncPos = app.wire().bytes().writePosition();
                    probe.begin();
                    try (FileChannel fc = FileChannel.open(cycleFile, StandardOpenOption.WRITE)) {
                        fc.force(false);
                    }
                    probe.end(phases, "fsync");
                    after = true;
                }
            }
            endPos = app.wire() == null ? -1 : app.wire().bytes().writePosition();
            elapsed = System.nanoTime() - t0;
            File dir = new File(q.fileAbsolutePath());
            File[] list = dir.listFiles();
            if (list != null)
                for (File f : list)
                    files.add(f.getAbsolutePath());
        }

        long[] sorted = lat.clone();
        Arrays.sort(sorted);
        StringBuilder o = new StringBuilder();
        o.append("{\"client\":\"chronicle-queue\",\"messages\":").append(messages)
         .append(",\"size\":").append(size)
         .append(",\"bytes\":").append((long) messages * size)
         .append(",\"pretouch\":").append(pretouch)
         .append(",\"pretouch_every\":").append(pretouchEvery)
         .append(",\"fsync_after\":").append(fsyncAfter)
         .append(",\"queue_file\":").append(str(cycleFile.toString()))
         .append(",\"files\":[");
        String sep = "";
        for (String f : files) {
            o.append(sep).append(str(f));
            sep = ",";
        }
        o.append("],\"first_end_pos\":").append(startPos)
         .append(",\"fsync_end_pos\":").append(fsyncPos)
         .append(",\"last_end_pos\":").append(endPos)
         .append(",\"elapsed_ns\":").append(elapsed)
         .append(",\"p50_ns\":").append(messages > 0 ? sorted[messages / 2] : 0)
         .append(",\"p99_ns\":").append(messages > 0 ? sorted[(int) Math.min(messages - 1, (long) messages * 99 / 100)] : 0)
         .append(",\"max_ns\":").append(messages > 0 ? sorted[messages - 1] : 0)
         .append(",\"phases\":");
        if (phases.isEmpty()) {
            o.append("null");
        } else {
            o.append('{');
            sep = "";
            for (Map.Entry<String, long[]> e : phases.entrySet()) {
                o.append(sep).append(str(e.getKey())).append(":{");
                for (int c = 0; c < COLUMNS.length; c++)
                    o.append(c > 0 ? "," : "").append(str(COLUMNS[c])).append(':').append(e.getValue()[c]);
                o.append('}');
                sep = ",";
            }
            o.append('}');
        }
        o.append('}');
        System.out.println(o);
    }

    private static boolean parseOnOff(String v) {
        if ("on".equals(v))
            return true;
        if ("off".equals(v))
            return false;
        usage("--pretouch takes on or off");
        return false;
    }

    private static void usage(String why) {
        System.err.println("ChronicleAppend: " + why);
        System.err.println("usage: ChronicleAppend --dir D [--messages N] [--size S] [--pretouch on|off]"
                + " [--pretouch-every K] [--fsync-after M] [--roll FAST_DAILY] [--block-size BYTES]");
        System.exit(2);
    }

    private static String str(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /**
     * Reads the cycle file's row of /proc/wpstat/inodes (dev MAJ:MIN and
     * inode; the newest row wins, as in selftests/bats/helpers.bash counter).
     * Inactive when the file cannot be read.
     */
    private static final class Probe {
        private static final Path INODES = Paths.get("/proc/wpstat/inodes");
        private final Path file;
        private final boolean active;
        private long[] before;

        Probe(Path file) {
            this.file = file;
            this.active = Files.isReadable(INODES);
        }

        void begin() throws IOException {
            before = active ? read() : null;
        }

        void end(Map<String, long[]> phases, String name) throws IOException {
            if (before == null)
                return;
            long[] now = read();
            long[] acc = phases.computeIfAbsent(name, k -> new long[COLUMNS.length]);
            for (int c = 0; c < COLUMNS.length; c++)
                acc[c] += now[c] - before[c];
        }

        private long[] read() throws IOException {
            long[] v = new long[COLUMNS.length];
            if (!Files.exists(file))
                return v;
            long dev = ((Number) Files.getAttribute(file, "unix:dev")).longValue();
            long ino = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
            long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
            long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
            String want = major + ":" + minor;
            List<String> lines = new ArrayList<>(Arrays.asList(
                    new String(Files.readAllBytes(INODES), StandardCharsets.US_ASCII).split("\n")));
            String[] head = lines.get(0).trim().split("\\s+");
            int[] idx = new int[COLUMNS.length];
            int idev = -1;
            int iino = -1;
            for (int h = 0; h < head.length; h++) {
                if (head[h].equals("dev"))
                    idev = h;
                if (head[h].equals("ino"))
                    iino = h;
                for (int c = 0; c < COLUMNS.length; c++)
                    if (head[h].equals(COLUMNS[c]))
                        idx[c] = h;
            }
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f.length < head.length || !f[idev].equals(want) || !f[iino].equals(Long.toString(ino)))
                    continue;
                for (int c = 0; c < COLUMNS.length; c++)
                    v[c] = f[idx[c]].equals("-") ? 0 : Long.parseLong(f[idx[c]]);
            }
            return v;
        }
    }
}
