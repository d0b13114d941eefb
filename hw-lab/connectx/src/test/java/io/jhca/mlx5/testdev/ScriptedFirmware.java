package io.jhca.mlx5.testdev;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.connectx.CmdQueueDevice;
import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.connectx.DeviceCommand;
import io.jhca.mlx5.cmd.DriverCmdLayouts;
import io.jhca.mlx5.cmd.Field;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.QpModifyLayouts;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.spi.Mlx5Function;

/**
 * A scripted ConnectX function for the driver's tests (not the device model): BAR0 is plain memory whose 32-bit
 * stores are recorded and whose command doorbell wakes a firmware thread; the firmware serves the command queue
 * with {@link CmdQueueDevice}, answers every command the driver sends with plausible values, records each command
 * (opcode, op_mod, input bytes) in order, and can be told to fail or hang a command. Queues it creates are handed to
 * a {@link LoopbackEngine}, so traffic can run through the verbs objects. DMA memory is the process's own (identity
 * IOVAs, not locked).
 */
public final class ScriptedFirmware implements Mlx5Function {

    /** One executed command. */
    public record Seen(int opcode, int opMod, byte[] input, long at) {
        public UnsafeBuffer in() {
            return new UnsafeBuffer(input);
        }

        public long get(Layout layout, String field) {
            return layout.get(in(), 0, field);
        }

        @Override
        public String toString() {
            return CmdOpcode.name(opcode) + "(" + opMod + ")";
        }
    }

    /** A 32-bit BAR0 store the driver made: offset and host-order value. */
    public record Store(int offset, int value) {
    }

    public static final int LOG_CMDQ_SIZE = 5;
    public static final int LOG_CMDQ_STRIDE = 6;
    private static final int BAR_PAGES = 64;

    private final String name;
    private final List<InetAddress> addresses;
    private final ByteBuffer barBytes = ByteBuffer.allocateDirect(BAR_PAGES * 4096 + 4096);
    private final UnsafeBuffer barMemory;
    private final MmioWindow bar;
    private final TreeMap<Long, DmaRegion> dma = new TreeMap<>();
    private final CmdQueueDevice device;
    private final BlockingQueue<Integer> doorbells = new LinkedBlockingQueue<>();
    private final Thread firmware;
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile boolean running = true;

    public final List<Seen> seen = Collections.synchronizedList(new ArrayList<>());
    public final List<Store> stores = Collections.synchronizedList(new ArrayList<>());
    public final LoopbackEngine engine = new LoopbackEngine(this::reachable);
    private final Map<Integer, int[]> failures = new ConcurrentHashMap<>();
    private final Map<Integer, Boolean> hangs = new ConcurrentHashMap<>();
    private final Map<Integer, LoopbackEngine.Cq> cqs = new HashMap<>();
    private final Map<Integer, LoopbackEngine.Qp> qps = new HashMap<>();
    private final List<Long> pagesHeld = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger nextPd = new AtomicInteger(0x10);
    private final AtomicInteger nextMkey = new AtomicInteger(0x40);
    private final AtomicInteger nextCqn = new AtomicInteger(0x80);
    private final AtomicInteger nextQpn = new AtomicInteger(0x100);
    private final AtomicInteger nextUar = new AtomicInteger(1);
    /** The counter_set_id ALLOC_Q_COUNTER answers (the driver asks only when max_qp_cnt is set: capEditor). */
    public static final int Q_COUNTER_SET = 5;

    public volatile int bootPages = 3;
    public volatile int initPages = 2;
    public volatile long initializingMillis;
    public volatile boolean neverReady;
    public volatile Consumer<MutableDirectBuffer> capEditor = cap -> { };
    private volatile long readyAt;
    private UnsafeBuffer eq;
    private int eqEntries;
    private int eqProducer;
    public volatile boolean closed;

    public ScriptedFirmware(String name, List<InetAddress> addresses) {
        this.name = name;
        this.addresses = List.copyOf(addresses);
        UnsafeBuffer raw = new UnsafeBuffer(barBytes);
        int pad = (int) (-raw.addressOffset() & 4095);
        this.barMemory = new UnsafeBuffer(barBytes, pad, BAR_PAGES * 4096);
        this.bar = new MmioWindow(barMemory) {
            @Override
            protected void store32(int offset, int deviceOrder) {
                super.store32(offset, deviceOrder);
                int value = Integer.reverseBytes(deviceOrder);
                stores.add(new Store(offset, value));
                onStore(offset, value);
            }
        };
        // fw 16.35.2000, cmdif rev 5, queue geometry on the read side of cmdq_addr_l_sz, still initializing
        barMemory.putInt(InitSegment.FW_REV, (35 << 16) | 16, ByteOrder.BIG_ENDIAN);
        barMemory.putInt(InitSegment.CMDIF_REV_FW_SUB, (5 << 16) | 2000, ByteOrder.BIG_ENDIAN);
        barMemory.putInt(InitSegment.CMDQ_ADDR_L_SZ, LOG_CMDQ_SIZE << 4 | LOG_CMDQ_STRIDE, ByteOrder.BIG_ENDIAN);
        setInitializing(true);
        this.device = new CmdQueueDevice(this::wrap);
        this.firmware = new Thread(this::loop, name + "-fw");
        this.firmware.setDaemon(true);
    }

    /** A function that comes out of initialization at once. */
    public static ScriptedFirmware started(String name, List<InetAddress> addresses) {
        return new ScriptedFirmware(name, addresses).start();
    }

    /** Starts the firmware (after the test configured it): initialization ends after {@link #initializingMillis}. */
    public ScriptedFirmware start() {
        firmware.start();
        becomeReadyLater();
        return this;
    }

    /** Make commands of this opcode fail with a status and syndrome. */
    public void fail(int opcode, CmdStatus status, int syndrome) {
        failures.put(opcode, new int[] {status.value(), syndrome});
    }

    /** Never answer commands of this opcode (until the function is closed). */
    public void hang(int opcode) {
        hangs.put(opcode, true);
    }

    /** The commands seen, as kernel names. */
    public List<String> commandNames() {
        List<String> out = new ArrayList<>();
        synchronized (seen) {
            for (Seen s : seen) {
                out.add(CmdOpcode.name(s.opcode()));
            }
        }
        return out;
    }

    public List<Seen> commands(int opcode) {
        List<Seen> out = new ArrayList<>();
        synchronized (seen) {
            for (Seen s : seen) {
                if (s.opcode() == opcode) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    /** Pages the firmware holds. */
    public int pagesHeld() {
        return pagesHeld.size();
    }

    /** When the initializing bit last cleared (nanoTime). */
    public long readyAt() {
        return readyAt;
    }

    private void setInitializing(boolean on) {
        barMemory.putIntVolatile(InitSegment.INITIALIZING, on ? Integer.reverseBytes(1 << 31) : 0);
    }

    private void onStore(int offset, int value) {
        if (offset == InitSegment.CMD_DBELL) {
            doorbells.add(value);
        } else if (offset == InitSegment.CMDQ_ADDR_L_SZ && (value & ~0xfff) != 0) {
            // the queue is programmed: firmware initializes for a while (rdma-core waits for it again)
            setInitializing(true);
            long hi = Integer.toUnsignedLong(barMemory.getInt(InitSegment.CMDQ_ADDR_H, ByteOrder.BIG_ENDIAN));
            device.attach(hi << 32 | (Integer.toUnsignedLong(value) & ~0xfffL), LOG_CMDQ_SIZE, LOG_CMDQ_STRIDE);
            becomeReadyLater();
        }
    }

    private void becomeReadyLater() {
        if (neverReady) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(initializingMillis);
            } catch (InterruptedException e) {
                return;
            }
            readyAt = System.nanoTime();
            setInitializing(false);
        }, name + "-init");
        t.setDaemon(true);
        t.start();
    }

    private void loop() {
        int health = 0;
        while (running) {
            // a live firmware's health counter moves (the driver's health polling watches it)
            health = (health + 1) & 0xffffff;
            barMemory.putIntVolatile(InitSegment.HEALTH_COUNTER, Integer.reverseBytes(health));
            Integer mask;
            try {
                mask = doorbells.poll(20, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (mask != null && device.attached()) {
                device.onDoorbell(mask, this::execute);
            }
        }
    }

    /** What the loopback engine may touch: memory allocated or mapped for the device (identity IOVAs). */
    private boolean reachable(long address, long length) {
        synchronized (dma) {
            Map.Entry<Long, DmaRegion> e = dma.floorEntry(address);
            return e != null && !e.getValue().isClosed() && address - e.getKey() <= e.getValue().length() - length;
        }
    }

    private boolean wrap(UnsafeBuffer view, long iova, int length) {
        synchronized (dma) {
            Map.Entry<Long, DmaRegion> e = dma.floorEntry(iova);
            if (e == null || e.getValue().isClosed() || iova + length > e.getKey() + e.getValue().length()) {
                return false;
            }
            view.wrap(iova, length);
            return true;
        }
    }

    private void execute(DeviceCommand cmd) {
        int op = cmd.opcode();
        byte[] copy = new byte[cmd.inLength()];
        cmd.input().getBytes(0, copy);
        seen.add(new Seen(op, cmd.opMod(), copy, System.nanoTime()));
        if (hangs.containsKey(op)) {
            try {
                released.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        Layout in = DriverCmdLayouts.input(op);
        Layout out = DriverCmdLayouts.output(op);
        if (in == null) {
            cmd.status(CmdStatus.BAD_OP_ERR, 0x0bad);
            return;
        }
        if (cmd.inLength() < in.sizeBytes() || cmd.outLength() < out.sizeBytes()) {
            cmd.status(CmdStatus.BAD_INP_LEN_ERR, cmd.inLength());
            return;
        }
        int[] f = failures.get(op);
        if (f != null) {
            cmd.status(f[0], f[1]);
            return;
        }
        DirectBuffer i = cmd.input();
        MutableDirectBuffer o = cmd.output();
        switch (op) {
            case CmdOpcode.QUERY_ISSI:
                out.set(o, 0, "supported_issi_dw0", 0x3);
                break;
            case CmdOpcode.QUERY_PAGES:
                out.set(o, 0, "num_pages", cmd.opMod() == HcaLayouts.PAGES_BOOT ? bootPages : initPages);
                break;
            case CmdOpcode.MANAGE_PAGES:
                managePages(cmd, in, out, i, o);
                break;
            case CmdOpcode.QUERY_HCA_CAP:
                caps(o);
                break;
            case CmdOpcode.ALLOC_UAR:
                out.set(o, 0, "uar", nextUar.getAndIncrement());
                break;
            case CmdOpcode.ALLOC_Q_COUNTER:
                out.set(o, 0, "counter_set_id", Q_COUNTER_SET);
                break;
            case CmdOpcode.QUERY_Q_COUNTER:
                // fixed values: a count with bit 31 set shows the driver reads the counters unsigned
                out.set(o, 0, "rx_write_requests", 3);
                out.set(o, 0, "out_of_sequence", 0xfffffffeL);
                break;
            case CmdOpcode.CREATE_EQ:
                createEq(in, i);
                out.set(o, 0, "eq_number", 7);
                break;
            case CmdOpcode.ALLOC_PD:
                out.set(o, 0, "pd", nextPd.getAndIncrement());
                break;
            case CmdOpcode.CREATE_MKEY:
                out.set(o, 0, "mkey_index", nextMkey.getAndIncrement());
                break;
            case CmdOpcode.CREATE_CQ:
                out.set(o, 0, "cqn", createCq(in, i));
                break;
            case CmdOpcode.CREATE_QP:
                out.set(o, 0, "qpn", createQp(in, i));
                break;
            case CmdOpcode.INIT2RTR_QP:
                connect(in, i);
                break;
            case CmdOpcode.QP_2RST:
                synchronized (engine) {
                    LoopbackEngine.Qp q = qps.get((int) in.get(i, 0, "qpn"));
                    if (q != null) {
                        q.reset();
                    }
                }
                break;
            case CmdOpcode.DESTROY_QP:
                synchronized (engine) {
                    engine.forget((int) in.get(i, 0, "qpn"));
                }
                break;
            default:
                break;
        }
    }

    private void managePages(DeviceCommand cmd, Layout in, Layout out, DirectBuffer i, MutableDirectBuffer o) {
        int n = (int) in.get(i, 0, "input_num_entries");
        if (cmd.opMod() == HcaLayouts.PAGES_GIVE) {
            Field pas = in.flexibleArray();
            for (int k = 0; k < n; k++) {
                pagesHeld.add(pas.getElement(i, 0, k));
            }
        } else {
            int back = Math.min(n, pagesHeld.size());
            Field pas = out.flexibleArray();
            for (int k = 0; k < back; k++) {
                pas.setElement(o, 0, k, pagesHeld.remove(pagesHeld.size() - 1));
            }
            out.set(o, 0, "output_num_entries", back);
        }
    }

    private void caps(MutableDirectBuffer o) {
        Layout cap = HcaCap.CMD_HCA_CAP;
        int base = 0x10;
        cap.set(o, base, "log_max_qp", 18);
        cap.set(o, base, "log_max_qp_sz", 15);
        cap.set(o, base, "log_max_cq", 24);
        cap.set(o, base, "log_max_cq_sz", 22);
        cap.set(o, base, "log_max_eq", 4);
        cap.set(o, base, "log_max_eq_sz", 22);
        cap.set(o, base, "log_max_mkey", 24);
        cap.set(o, base, "log_max_pd", 24);
        cap.set(o, base, "log_max_mrw_sz", 64);
        cap.set(o, base, "log_max_ra_req_qp", 4);
        cap.set(o, base, "log_max_ra_res_qp", 4);
        cap.set(o, base, "log_max_msg", 30);
        cap.set(o, base, "local_ca_ack_delay", 16);
        cap.set(o, base, "port_type", HcaCap.PORT_TYPE_ETH);
        cap.set(o, base, "num_ports", 1);
        cap.set(o, base, "roce", 1);
        cap.set(o, base, "atomic", 1);
        cap.set(o, base, "rc", 1);
        cap.set(o, base, "uc", 1);
        cap.set(o, base, "ud", 1);
        cap.set(o, base, "bf", 1);
        cap.set(o, base, "log_bf_reg_size", 9);
        cap.set(o, base, "log_pg_sz", 12);
        capEditor.accept(o);   // QUERY_HCA_CAP output: cmd_hca_cap at byte 0x10
    }

    private void createEq(Layout in, DirectBuffer i) {
        int log = (int) in.get(i, 0, "eq_context_entry.log_eq_size");
        long pas0 = in.flexibleArray().getElement(i, 0, 0);
        synchronized (this) {
            eqEntries = 1 << log;
            eq = new UnsafeBuffer(pas0, eqEntries * Eqe.SIZE);
            eqProducer = 0;
        }
    }

    /** Writes one EQE (body by {@code body}, owner last with the producer's parity), as the device would. */
    public synchronized void postEqe(Consumer<UnsafeBuffer> body) {
        int at = (eqProducer & (eqEntries - 1)) * Eqe.SIZE;
        UnsafeBuffer one = new UnsafeBuffer(eq, at, Eqe.SIZE);
        body.accept(one);
        Eqe.setOwner(one, 0, (eqProducer & eqEntries) != 0 ? 1 : 0);
        eqProducer++;
    }

    private int createCq(Layout in, DirectBuffer i) {
        int cqn = nextCqn.getAndIncrement();
        int log = (int) in.get(i, 0, "cq_context.log_cq_size");
        long dbr = in.get(i, 0, "cq_context.dbr_addr");
        long pas0 = in.flexibleArray().getElement(i, 0, 0);
        synchronized (engine) {
            cqs.put(cqn, engine.cq(cqn, pas0, 1 << log, dbr));
        }
        return cqn;
    }

    private int createQp(Layout in, DirectBuffer i) {
        int qpn = nextQpn.getAndIncrement();
        Layout q = QpLayouts.CREATE_QP_IN;
        int st = (int) q.get(i, 0, "qpc.st");
        boolean rq = q.get(i, 0, "qpc.rq_type") == QpModifyLayouts.RQ_TYPE_REGULAR;
        int rqCnt = rq ? 1 << q.get(i, 0, "qpc.log_rq_size") : 0;
        int rqShift = rq ? (int) q.get(i, 0, "qpc.log_rq_stride") + 4 : 0;
        int sqCnt = q.get(i, 0, "qpc.no_sq") != 0 ? 0 : 1 << q.get(i, 0, "qpc.log_sq_size");
        long dbr = q.get(i, 0, "qpc.dbr_addr");
        long pas0 = q.flexibleArray().getElement(i, 0, 0);
        int bytes = Math.max(4096, (rqCnt << rqShift) + sqCnt * 64);
        synchronized (engine) {
            qps.put(qpn, engine.qp(qpn, st == QpLayouts.ST_UD, pas0, bytes, rqCnt, rqShift, rqCnt << rqShift, sqCnt, dbr,
                    cqs.get((int) q.get(i, 0, "qpc.cqn_snd")), cqs.get((int) q.get(i, 0, "qpc.cqn_rcv"))));
        }
        return qpn;
    }

    private void connect(Layout in, DirectBuffer i) {
        int qpn = (int) in.get(i, 0, "qpn");
        int remote = (int) in.get(i, 0, "qpc.remote_qpn");
        synchronized (engine) {
            LoopbackEngine.Qp a = qps.get(qpn);
            if (a != null && !a.ud) {
                a.remoteQpn = remote;
            }
        }
    }

    /** The engine's view of a QP created through this firmware. */
    public LoopbackEngine.Qp deviceQp(int qpn) {
        synchronized (engine) {
            return qps.get(qpn);
        }
    }

    public LoopbackEngine.Cq deviceCq(int cqn) {
        synchronized (engine) {
            return cqs.get(cqn);
        }
    }

    /** Runs the data path engine once (test thread). */
    public int process() {
        synchronized (engine) {
            return engine.process();
        }
    }

    // ---- Mlx5Function ----

    @Override
    public String name() {
        return name;
    }

    @Override
    public String location() {
        return "scripted:" + name;
    }

    @Override
    public MmioWindow bar0() {
        return bar;
    }

    public UnsafeBuffer barMemory() {
        return barMemory;
    }

    @Override
    public DmaRegion allocateDma(long bytes) {
        DmaRegion r = DmaMemory.allocate(DmaOptions.of(bytes).lock(false));
        synchronized (dma) {
            dma.values().removeIf(DmaRegion::isClosed);
            dma.put(r.iova(0), r);
        }
        return r;
    }

    @Override
    public void mapForDevice(DmaRegion region) {
        synchronized (dma) {
            dma.put(region.iova(0), region);
        }
    }

    @Override
    public void unmapForDevice(DmaRegion region) {
        synchronized (dma) {
            dma.remove(region.iova(0));
        }
    }

    @Override
    public List<InetAddress> portAddresses() {
        return addresses;
    }

    @Override
    public void close() {
        closed = true;
        running = false;
        released.countDown();
        try {
            firmware.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
