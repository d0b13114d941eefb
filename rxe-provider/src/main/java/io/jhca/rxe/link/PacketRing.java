package io.jhca.rxe.link;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.LibC;
import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;

/**
 * The receive side of a loopback link without a system call per look: an AF_PACKET socket on the loopback interface
 * with a TPACKET_V2 receive ring mapped into this process, and a classic BPF filter that passes only IPv4 UDP
 * datagrams to the link's address and port. A busy engine reads each frame's status word in memory; a busy recvmsg(2)
 * costs a system call per look, and the Java after it runs with cold caches (HISTORY.md, rounds 37 and 39: a Java
 * ping-pong's median round trip 15% lower from a ring than by busy receive).
 *
 * <p>The link's UDP socket stays bound, so that no ICMP port unreachable answers a datagram, with a filter that drops
 * everything (the ring has its copy). A held ACK and its request arrive as one GSO datagram here (on loopback the
 * kernel never splits it before a packet socket sees it), so the socket asks for a virtio_net_hdr before each frame
 * (PACKET_VNET_HDR) whose gso_size splits it as UDP_GRO's cmsg does for the socket. A kernel that cannot describe a
 * UDP GSO frame that way (before Linux 6.2 virtio_net_hdr_from_skb refused SKB_GSO_UDP_L4, and the packet socket
 * drops such a frame) fails {@link #open}'s probe, and the link receives by its socket.
 *
 * <p>Needs CAP_NET_RAW; {@link #open} says why it cannot be had, and the link keeps its socket receive. Layouts are
 * Linux's (linux/if_packet.h, linux/filter.h, linux/virtio_net.h; checked against the headers by
 * PacketRingLayoutGoldenTest). Every field a frame's header or an IPv4/UDP header gives is checked against the frame
 * before it is used: the ring is written by the kernel, the bytes in it by any local sender. Engine thread only.
 */
final class PacketRing implements AutoCloseable {

    /** AF_PACKET, SOCK_RAW, SOCK_NONBLOCK, SOCK_CLOEXEC (linux/socket.h, bits/socket_type.h). */
    static final int AF_PACKET = 17;
    static final int SOCK_RAW = 3;
    static final int SOCK_NONBLOCK = 0x800;
    static final int SOCK_CLOEXEC = 0x80000;
    /** The call that opens the packet socket: refused, no ring can open in this process (no CAP_NET_RAW, say). */
    static final String SOCKET_CALL = "socket(AF_PACKET)";
    /** ETH_P_IP (linux/if_ether.h). */
    static final int ETH_P_IP = 0x0800;
    /** SOL_PACKET (linux/socket.h) and its options (linux/if_packet.h). */
    static final int SOL_PACKET = 263;
    static final int PACKET_RX_RING = 5;
    static final int PACKET_VERSION = 10;
    static final int PACKET_VNET_HDR = 15;
    static final int PACKET_IGNORE_OUTGOING = 23;
    static final int TPACKET_V2 = 1;
    /** SO_ATTACH_FILTER (asm-generic/socket.h). */
    static final int SO_ATTACH_FILTER = 26;
    static final int SO_DETACH_FILTER = 27;
    /** struct tpacket2_hdr: tp_status 0, tp_len 4, tp_snaplen 8, tp_mac 12, tp_net 14; 32 bytes. */
    static final int TP_STATUS = 0;
    static final int TP_LEN = 4;
    static final int TP_SNAPLEN = 8;
    static final int TP_MAC = 12;
    static final int TP_NET = 14;
    static final int TPACKET2_HDRLEN = 32;
    /** Where the kernel puts a frame's struct sockaddr_ll: TPACKET_ALIGN(sizeof(struct tpacket2_hdr)). */
    static final int TP_SLL = 32;
    /** tp_status: TP_STATUS_KERNEL 0 (the kernel's to fill), TP_STATUS_USER 1 (ours to read). */
    static final int TP_STATUS_USER = 1;
    /** struct sockaddr_ll (linux/if_packet.h): family 0, protocol 2 (network order), ifindex 4; 20 bytes. */
    static final int SLL_PROTOCOL = 2;
    static final int SLL_IFINDEX = 4;
    static final int SOCKADDR_LL_SIZE = 20;
    /** struct tpacket_req: block size, block count, frame size, frame count (u32 each). */
    static final int TPACKET_REQ_SIZE = 16;
    /** struct virtio_net_hdr (10 bytes, little-endian here): gso_type at 1, gso_size at 4. */
    static final int VNET_HDR_SIZE = 10;
    static final int VNET_GSO_TYPE = 1;
    static final int VNET_GSO_SIZE = 4;
    /** VIRTIO_NET_HDR_GSO_NONE, VIRTIO_NET_HDR_GSO_UDP_L4 (linux/virtio_net.h). */
    static final int VNET_GSO_NONE = 0;
    static final int VNET_GSO_UDP_L4 = 5;
    /** struct sock_fprog (LP64): len (u16) at 0, filter pointer at 8; struct sock_filter 8 bytes. */
    static final int SOCK_FPROG_SIZE = 16;
    static final int SOCK_FILTER_SIZE = 8;

    /**
     * A frame holds its header, the sockaddr_ll and alignment the kernel puts before the data, the virtio_net_hdr,
     * an Ethernet header and the largest datagram a jhca device sends or takes whole (a burst of at most
     * {@link UdpLink#MAX_BURST} bytes, a coalesced pair, a 4 KiB MTU packet), with room to spare: four pages a frame.
     */
    static final int FRAME_SIZE = 16384;
    /** Fewest and most frames: at least a window of 128 full packets fits, at most 8 MiB of kernel memory a device. */
    static final int MIN_FRAMES = 256;
    static final int MAX_FRAMES = 512;

    private static final int IPV4_MIN_HEADER = 20;
    private static final int UDP_HEADER = 8;
    private static final int IPPROTO_UDP = 17;

    /** The calls jhca's socket binding does not have; public only because jnr-ffi implements it elsewhere. */
    public interface Calls {
        @SaveError
        int socket(int domain, int type, int protocol);

        /** setsockopt(2) with a native address as the value. */
        @SaveError
        int setsockopt(int fd, int level, int optname, long optval, int optlen);

        @SaveError
        int bind(int fd, long addr, int addrlen);

        int close(int fd);

        String strerror(int errnum);
    }

    private static volatile Calls calls;

    private final int fd;
    private final Pointer mapping;
    private final long mappingLength;
    private final UnsafeBuffer ring;
    private final int frames;
    /** The interface index, IPv4 address (as an int) and UDP port the filter passes, checked again for each frame. */
    private final int ifindex;
    private final int address;
    private int port;
    private int head;
    /** Frames taken since the batch was last empty, just before {@link #head}, not yet given back. */
    private int held;
    private RxBatch heldFor;
    private long dropped;
    private final SenderCache senders = new SenderCache();
    private boolean closed;

    private PacketRing(final int fd, final Pointer mapping, final long mappingLength, final int frames,
            final int ifindex, final int address, final int port) {
        this.fd = fd;
        this.ifindex = ifindex;
        this.address = address;
        this.port = port;
        this.mapping = mapping;
        this.mappingLength = mappingLength;
        this.ring = new UnsafeBuffer(mapping.address(), (int) mappingLength);
        this.frames = frames;
    }

    /**
     * Points the ring at another port of its address: a new filter replaces the old at once (SO_ATTACH_FILTER), and
     * frames for the old port still in the ring are dropped as they are read.
     */
    void filter(final int newPort) {
        final UnsafeBuffer program = program();
        writeFilter(program, PROGRAM_AT, ifindex, address, newPort);
        attach(calls(), fd, program, FILTER_LENGTH, "SO_ATTACH_FILTER");
        port = newPort;
    }

    static Calls calls() {
        Calls c = calls;
        if (c == null) {
            synchronized (PacketRing.class) {
                c = calls;
                if (c == null) {
                    calls = c = LibraryLoader.create(Calls.class).load("c");
                }
            }
        }
        return c;
    }

    /** Frames for a link asking for {@code socketBuffer} bytes of receive buffer: as many bytes of ring, bounded. */
    static int framesFor(final int socketBuffer) {
        return Math.max(MIN_FRAMES, Math.min(MAX_FRAMES, Integer.highestOneBit(Math.max(1, socketBuffer / FRAME_SIZE))));
    }

    /**
     * A ring receiving the IPv4 UDP datagrams to {@code local} (an IPv4 loopback address, which the caller checked,
     * and its bound port) on the loopback interface, {@code frames} frames long. Throws IllegalStateException saying
     * why it cannot be had (no CAP_NET_RAW, an older kernel); nothing is left open then.
     */
    static PacketRing open(final InetSocketAddress local, final int frames) {
        final InetAddress address = local.getAddress();   // IPv4 and loopback: RingProbe, the caller, made sure
        if (frames < 1 || Integer.bitCount(frames) != 1 || frames > MAX_FRAMES) {
            throw new IllegalArgumentException("frames " + frames);
        }
        final int ifindex = loopbackIndex();
        final Calls c = calls();
        final int fd = c.socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); // protocol 0: none until bound
        if (fd < 0) {
            throw failed(c, SOCKET_CALL);
        }
        Pointer mapping = null;
        final long length = (long) frames * FRAME_SIZE;
        try {
            final UnsafeBuffer program = program();
            writeFilter(program, PROGRAM_AT, ifindex, ipv4(address), local.getPort());
            attach(c, fd, program, FILTER_LENGTH, "SO_ATTACH_FILTER");
            final ByteBuffer scratch = BufferUtil.allocateDirectAligned(64, 64);
            final UnsafeBuffer s = new UnsafeBuffer(scratch);
            final long at = s.addressOffset();
            setInt(c, fd, PACKET_VERSION, TPACKET_V2, "PACKET_VERSION");
            setInt(c, fd, PACKET_VNET_HDR, 1, "PACKET_VNET_HDR");
            setInt(c, fd, PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING");
            s.putInt(0, FRAME_SIZE);
            s.putInt(4, frames);
            s.putInt(8, FRAME_SIZE);
            s.putInt(12, frames);
            check(c, c.setsockopt(fd, SOL_PACKET, PACKET_RX_RING, at, TPACKET_REQ_SIZE), "PACKET_RX_RING");
            final LibC libc = LibC.INSTANCE;
            final Pointer m = libc.mmap(null, length, 3 /* PROT_READ | PROT_WRITE */, 1 /* MAP_SHARED */, fd, 0);
            if (m == null || m.address() == -1L) {
                throw new IllegalStateException("mmap of the packet ring failed: errno " + LibC.errno());
            }
            mapping = m;
            s.setMemory(0, 32, (byte) 0);
            s.putShort(0, (short) AF_PACKET);
            // IPv4 on every interface, the filter taking lo's only. A tap bound to lo (dev->ptype_specific) is handed a
            // frame after ip_rcv, which then finds the skb shared and clones it: two idle rings cost a plain UDP stream
            // on lo 9-13%. One for ETH_P_ALL on lo comes first, but is on lo's transmit path as well: a plain 2-byte
            // ping-pong 10% slower. One bound to no interface joins ip_rcv's list (ptype_base) ahead of it (a new
            // entry goes first) and has let go of the skb before ip_rcv takes it.
            s.putShort(SLL_PROTOCOL, (short) ETH_P_IP, ByteOrder.BIG_ENDIAN);
            s.putInt(SLL_IFINDEX, 0);
            check(c, c.bind(fd, at, SOCKADDR_LL_SIZE), "bind of the packet socket");
            // the kernel read the scratch memory in these calls: it must not have been freed under them
            java.lang.ref.Reference.reachabilityFence(scratch);
            return new PacketRing(fd, m, length, frames, ifindex, ipv4(address), local.getPort());
        } catch (final RuntimeException e) {
            if (mapping != null) {
                LibC.INSTANCE.munmap(mapping, length);
            }
            Closer.close(fd);
            throw e;
        }
    }

    /** Classic BPF opcodes (linux/filter.h, linux/bpf_common.h): the class, size and mode or source or-ed. */
    static final int LD_H_ABS = 0x28;
    static final int LD_W_ABS = 0x20;
    static final int LD_B_ABS = 0x30;
    static final int LD_H_IND = 0x48;
    static final int LDX_B_MSH = 0xb1;
    static final int JMP_JEQ_K = 0x15;
    static final int JMP_JSET_K = 0x45;
    static final int RET_K = 0x06;

    /** The ancillary word with the receiving interface's index (linux/filter.h: SKF_AD_OFF + SKF_AD_IFINDEX). */
    static final int SKF_AD_IFINDEX_WORD = -0x1000 + 8;

    /** Classic BPF instructions in {@link #writeFilter}. */
    static final int FILTER_LENGTH = 15;

    /**
     * The filter: received on the loopback interface, IPv4, to the link's address, UDP, not a fragment, to its port
     * (the socket is bound to no interface, see {@link #open}, so the interface is the first thing it checks). Anything
     * else is never copied into the ring. A jump's offsets count from the next instruction.
     */
    static void writeFilter(final UnsafeBuffer b, final int at, final int ifindex, final int address, final int port) {
        int i = at;
        i = insn(b, i, LD_W_ABS, 0, 0, SKF_AD_IFINDEX_WORD); // 0  ld ifidx         receiving interface
        i = insn(b, i, JMP_JEQ_K, 0, 12, ifindex);     // 1  jeq #lo             else 14
        i = insn(b, i, LD_H_ABS, 0, 0, 12);            // 2  ldh [12]            ethertype
        i = insn(b, i, JMP_JEQ_K, 0, 10, ETH_P_IP);    // 3  jeq #0x800          else 14
        i = insn(b, i, LD_W_ABS, 0, 0, 30);            // 4  ld [30]             IPv4 destination
        i = insn(b, i, JMP_JEQ_K, 0, 8, address);      // 5  jeq #address        else 14
        i = insn(b, i, LD_B_ABS, 0, 0, 23);            // 6  ldb [23]            protocol
        i = insn(b, i, JMP_JEQ_K, 0, 6, IPPROTO_UDP);  // 7  jeq #17             else 14
        i = insn(b, i, LD_H_ABS, 0, 0, 20);            // 8  ldh [20]            flags and fragment offset
        i = insn(b, i, JMP_JSET_K, 4, 0, 0x3fff);      // 9  jset #0x3fff        a fragment: 14
        i = insn(b, i, LDX_B_MSH, 0, 0, 14);           // 10 ldxb 4*([14]&0xf)   IPv4 header length
        i = insn(b, i, LD_H_IND, 0, 0, 16);            // 11 ldh [x+16]          UDP destination port
        i = insn(b, i, JMP_JEQ_K, 0, 1, port);         // 12 jeq #port           else 14
        i = insn(b, i, RET_K, 0, 0, 0x40000);          // 13 ret #0x40000        the whole frame (tcpdump's snap length)
        insn(b, i, RET_K, 0, 0, 0);                    // 14 ret #0              nothing
    }

    /** A one-instruction filter that passes nothing: the UDP socket of a link that receives from its ring. */
    static void dropEverything(final int udpFd) {
        final UnsafeBuffer program = program();
        insn(program, PROGRAM_AT, RET_K, 0, 0, 0);
        attach(calls(), udpFd, program, 1, "SO_ATTACH_FILTER on the UDP socket");
    }

    /** Where a program's instructions start in {@link #program()}'s memory; its struct sock_fprog is at 0. */
    private static final int PROGRAM_AT = 64;

    /** Memory for a struct sock_fprog and, from {@link #PROGRAM_AT}, the instructions it points at. */
    private static UnsafeBuffer program() {
        return new UnsafeBuffer(BufferUtil.allocateDirectAligned(PROGRAM_AT + FILTER_LENGTH * SOCK_FILTER_SIZE, 64));
    }

    /** Attaches the {@code insns} instructions written at {@code program}'s {@link #PROGRAM_AT} to socket {@code fd}. */
    private static void attach(final Calls c, final int fd, final UnsafeBuffer program, final int insns,
            final String what) {
        program.putShort(0, (short) insns);
        program.putLong(8, program.addressOffset() + PROGRAM_AT);
        check(c, c.setsockopt(fd, NativeSocket.SOL_SOCKET, SO_ATTACH_FILTER, program.addressOffset(), SOCK_FPROG_SIZE),
                what);
        java.lang.ref.Reference.reachabilityFence(program);   // the kernel read it in the call
    }

    /** Takes a socket's filter off again (SO_DETACH_FILTER, asm-generic/socket.h). */
    static void detachFilter(final int fd) {
        final Calls c = calls();
        final UnsafeBuffer s = new UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8));
        c.setsockopt(fd, NativeSocket.SOL_SOCKET, SO_DETACH_FILTER, s.addressOffset(), 4);
        java.lang.ref.Reference.reachabilityFence(s);
    }

    private static int insn(final UnsafeBuffer b, final int at, final int code, final int jt, final int jf,
            final int k) {
        b.putShort(at, (short) code);
        b.putByte(at + 2, (byte) jt);
        b.putByte(at + 3, (byte) jf);
        b.putInt(at + 4, k);
        return at + SOCK_FILTER_SIZE;
    }

    /**
     * Takes the frames waiting, up to the batch's room: each datagram's UDP payload where it lies in its frame (no
     * copy), with its sender, as {@link Recvmmsg} hands them (a coalesced one split into its segments, numbered from 0).
     * A frame whose headers do not add up is dropped and counted. Returns the entries added; they stay valid until
     * the frames are given back ({@link #releaseHeld}).
     */
    int receive(final RxBatch batch, final int on) {
        if (closed) {
            return 0;
        }
        if (batch.count() == 0 || batch != heldFor) {
            releaseHeld();   // a fresh batch: the entries of the last one are no longer read
        }
        heldFor = batch;
        final UnsafeBuffer r = ring;
        final int first = batch.count();
        while (batch.room() > 0) {
            final int frame = head * FRAME_SIZE;
            if ((r.getIntVolatile(frame + TP_STATUS) & TP_STATUS_USER) == 0) {
                break;
            }
            if (!take(r, frame, batch, on)) {
                break;   // a coalesced datagram that needs more room than is left: the next call takes it
            }
            held++;   // its entries point into it: the kernel gets it back at the next call
            head = head + 1 == frames ? 0 : head + 1;
        }
        return batch.count() - first;
    }

    /**
     * Gives the frames taken into a batch back to the kernel, oldest first, once their entries are no longer read: when
     * the engine has handled the batch ({@link Link#handled}, under its lock, by the thread that handled it; a sleep
     * needs every frame back, for poll(2) calls a packet socket readable while its newest frame is the user's), and
     * at the latest when the next receive finds the batch empty. A caller that receives into a batch again without
     * clearing it keeps the earlier entries valid.
     */
    void releaseHeld() {
        if (closed) {
            return;   // unmapped: nothing of it may be touched
        }
        final UnsafeBuffer r = ring;
        int f = head - held;
        if (f < 0) {
            f += frames;
        }
        for (; held > 0; held--) {
            r.putIntOrdered(f * FRAME_SIZE + TP_STATUS, 0);   // TP_STATUS_KERNEL
            f = f + 1 == frames ? 0 : f + 1;
        }
    }

    /**
     * One frame into the batch; false (nothing taken) if its segments need more entries than are free. A datagram
     * longer than a frame (the ring keeps its first bytes) or a slot is handed over as a full slot, as a socket
     * receive cuts it, so the engine counts it oversize either way.
     */
    private boolean take(final UnsafeBuffer r, final int frame, final RxBatch batch, final int on) {
        final long len = r.getInt(frame + TP_LEN) & 0xFFFF_FFFFL;
        final long snap = r.getInt(frame + TP_SNAPLEN) & 0xFFFF_FFFFL;
        final int mac = r.getShort(frame + TP_MAC) & 0xFFFF;
        final int net = r.getShort(frame + TP_NET) & 0xFFFF;
        // the frame's bytes run from the link header (tp_mac) for tp_snaplen, all inside the frame; the
        // virtio_net_hdr lies just before the link header, the network header after it
        if (snap > len || mac < TPACKET2_HDRLEN + VNET_HDR_SIZE || net < mac || mac + snap > FRAME_SIZE
                || snap < (net - mac) + IPV4_MIN_HEADER + UDP_HEADER) {
            dropped++;
            return true;
        }
        if (r.getInt(frame + TP_SLL + SLL_IFINDEX) != ifindex) {
            dropped++;   // not from lo: the filter passes nothing else, so never seen
            return true;
        }
        final boolean cut = snap < len;
        final int ip = frame + net;
        final int ipBytes = (int) snap - (net - mac);
        final int versionIhl = r.getByte(ip) & 0xFF;
        final int ihl = (versionIhl & 0x0F) * 4;
        final int total = r.getShort(ip + 2, ByteOrder.BIG_ENDIAN) & 0xFFFF;
        if (versionIhl >> 4 != 4 || ihl < IPV4_MIN_HEADER || ihl + UDP_HEADER > ipBytes
                || (!cut && total > ipBytes) || total < ihl + UDP_HEADER
                || (r.getByte(ip + 9) & 0xFF) != IPPROTO_UDP) {
            dropped++;
            return true;
        }
        final int udp = ip + ihl;
        if (r.getInt(ip + 16, ByteOrder.BIG_ENDIAN) != address
                || (r.getShort(udp + 2, ByteOrder.BIG_ENDIAN) & 0xFFFF) != port) {
            dropped++;   // not this link's: left from before a filter changed
            return true;
        }
        final InetSocketAddress from = sender(r.getInt(ip + 12, ByteOrder.BIG_ENDIAN),
                r.getShort(udp, ByteOrder.BIG_ENDIAN) & 0xFFFF);
        final int length = total - ihl - UDP_HEADER;
        final int slotSize = batch.slotSize();
        final long slot = batch.slotAddress(batch.count());
        if (cut || length >= slotSize) {
            batch.addSegment(slot, slotSize, 0, from, on);
            return true;
        }
        final int vnet = frame + mac - VNET_HDR_SIZE;
        final int gsoType = r.getByte(vnet + VNET_GSO_TYPE) & 0x7F;   // the top bit is ECN
        final int segment = gsoType == VNET_GSO_UDP_L4
                ? r.getShort(vnet + VNET_GSO_SIZE, ByteOrder.LITTLE_ENDIAN) & 0xFFFF : 0;
        if (gsoType != VNET_GSO_NONE && (gsoType != VNET_GSO_UDP_L4 || segment == 0)) {
            dropped++;
            return true;
        }
        final int pieces = segment > 0 && length > segment ? (length + segment - 1) / segment : 1;
        if (pieces > batch.room()) {
            if (pieces > batch.capacity()) {
                dropped++;
                return true;
            }
            return false;
        }
        // the entries point into the frame itself (no copy); a parser may read to the IPv4 packet's end. As from a
        // socket, a segment's index stands for the IPv4 ID its ICRC covers (the ICRC modes are defined by what a
        // socket shows), though the ring could read the header's
        final long payload = r.addressOffset() + udp + UDP_HEADER;
        if (pieces == 1) {
            batch.addExternal(payload, length, length, 0, from, on);
            return true;
        }
        int index = 0;
        for (int offset = 0; offset < length; offset += segment) {
            batch.addExternal(payload + offset, Math.min(segment, length - offset), length - offset, index++, from, on);
        }
        return true;
    }

    /** The sender of an IPv4 address and port: from the cache, or made and cached. */
    private InetSocketAddress sender(final int address, final int port) {
        final long lo = address & 0xFFFF_FFFFL;
        final InetSocketAddress cached = senders.find(Recvmmsg.AF_INET, 0, lo, port, 0);
        if (cached != null) {
            return cached;
        }
        final byte[] a = {(byte) (address >>> 24), (byte) (address >>> 16), (byte) (address >>> 8), (byte) address};
        try {
            return senders.add(Recvmmsg.AF_INET, 0, lo, port, 0, new InetSocketAddress(InetAddress.getByAddress(a), port));
        } catch (final UnknownHostException e) {
            throw new IllegalStateException(e);   // four bytes are always an address
        }
    }

    /** The packet socket's descriptor: readable (poll) when a frame waits. */
    int fd() {
        return fd;
    }

    /** Frames dropped here: cut short by the kernel, or headers that do not add up. */
    long dropped() {
        return dropped;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LibC.INSTANCE.munmap(mapping, mappingLength);
        Closer.close(fd);
    }

    /**
     * Closes packet sockets on a thread of its own: the kernel waits for an RCU grace period or two before a packet
     * socket's close(2) returns (packet_release's synchronize_net), about 30 ms here, and a device's close should not.
     * The ring is unmapped before, so nothing of this process reads it; until the close the kernel may still copy
     * frames into it, which no one sees.
     */
    private static final class Closer {
        private static final java.util.concurrent.LinkedBlockingQueue<Integer> FDS =
                new java.util.concurrent.LinkedBlockingQueue<>();

        static {
            final Thread t = new Thread(Closer::run, "jhca-packet-ring-closer");
            t.setDaemon(true);
            t.start();
        }

        static void close(final int fd) {
            FDS.add(fd);
        }

        private static void run() {
            final Calls c = calls();
            while (true) {
                try {
                    c.close(FDS.take());
                } catch (final InterruptedException e) {
                    return;
                }
            }
        }
    }

    private static int ipv4(final InetAddress a) {
        final byte[] b = a.getAddress();
        return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
    }

    /** The loopback interface's index (in this network namespace). */
    private static int loopbackIndex() {
        try {
            final java.util.Enumeration<NetworkInterface> all = NetworkInterface.getNetworkInterfaces();
            while (all != null && all.hasMoreElements()) {
                final NetworkInterface ni = all.nextElement();
                if (ni.isLoopback() && ni.isUp()) {
                    return ni.getIndex();
                }
            }
        } catch (final SocketException e) {
            throw new IllegalStateException("cannot list the network interfaces: " + e.getMessage(), e);
        }
        throw new IllegalStateException("no loopback interface is up");
    }

    private static void setInt(final Calls c, final int fd, final int name, final int value, final String what) {
        final UnsafeBuffer v = new UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8));
        v.putInt(0, value);
        check(c, c.setsockopt(fd, SOL_PACKET, name, v.addressOffset(), 4), what);
        java.lang.ref.Reference.reachabilityFence(v);
    }

    private static void check(final Calls c, final int rc, final String what) {
        if (rc != 0) {
            throw failed(c, what);
        }
    }

    private static Refused failed(final Calls c, final String what) {
        final int errno = LastError.getLastError(Runtime.getRuntime(c));
        return new Refused(what, errno, what + " failed: errno " + errno + " (" + c.strerror(errno) + ")");
    }

    /** A system call of the ring's refused: which ({@link #call}, e.g. {@link #SOCKET_CALL}) and its errno. */
    static final class Refused extends IllegalStateException {
        private static final long serialVersionUID = 1L;
        final String call;
        final int errno;

        Refused(final String call, final int errno, final String message) {
            super(message);
            this.call = call;
            this.errno = errno;
        }
    }
}
