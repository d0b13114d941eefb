/**
 * The rxe provider: a software RoCEv2 HCA. Each device is a UDP socket on {@code <address>:4791} and a Java
 * transport engine that speaks the RoCEv2 wire protocol the way Linux Soft-RoCE (rdma_rxe) does, so it can talk to
 * another jhca rxe device or, in principle, to a Linux rxe peer.
 *
 * <h2>Devices</h2>
 * Without configuration the provider offers {@code rxe0} on 127.0.0.1 and {@code rxe1} on 127.0.0.2. Otherwise:
 * <ul>
 * <li>system property {@code jhca.rxe.devices}, else environment variable {@code JHCA_RXE_DEVICES}: a comma-separated
 * list of {@code name=address} (an IPv4 or IPv6 literal; no name lookup) or {@code name=if:<interface>} (a device
 * on the interface, see below), e.g. {@code rxe0=10.0.0.1,rxe1=if:eth1,rxe6=fd00::1};</li>
 * <li>the user's link file ({@link io.jhca.rxe.RxeLinks}: {@code $XDG_CONFIG_HOME/jhca/rxe-links}, else
 * {@code ~/.config/jhca/rxe-links}, or system property {@code jhca.rxe.links} / environment variable
 * {@code JHCA_RXE_LINKS}), lines {@code NAME netdev IFACE} written by {@code hwlab link add}: devices on interfaces,
 * after those of the property or environment (which win a shared name);</li>
 * <li>system property {@code jhca.rxe.progress}: {@code thread} (default) or {@code caller}, see below;</li>
 * <li>system property {@code jhca.rxe.idle}: idle strategy of engine threads, {@code adaptive} (default: by
 * time since the last work, yield until 2 ms, then sleep in ppoll on the device's sockets until a datagram, a post
 * or the next timer (retransmission, RNR wait, held ACK) ends it, at most 50 us doubling to 1 s; see {@link io.jhca.rxe.AdaptiveIdleStrategy} and
 * {@link io.jhca.rxe.link.KernelWait}), {@code busy}, {@code yield}, {@code backoff} (spin, yield, then
 * park 1 to 100 us, Agrona's counts) or {@code sleep} (park 100 us);</li>
 * <li>system property {@code jhca.rxe.icrc}: how received IPv4 ICRCs are checked, {@code auto} (default),
 * {@code strict} or {@code recover}, see below;</li>
 * <li>system property {@code jhca.rxe.ackhold}: nanoseconds a responder may hold an ACK back to coalesce it and
 * send it with the application's answer, just before it in one system call (default 4000; 0 sends each ACK at once,
 * on its own), see {@link io.jhca.rxe.RxeDeviceConfig#ACK_HOLD_PROPERTY};</li>
 * <li>system property {@code jhca.rxe.pollprogress}: {@code true} (default) or {@code false}, whether with thread
 * progress a poll that finds its CQ empty drives the device as a progress call does, see below.</li>
 * </ul>
 * In code, {@link io.jhca.rxe.RxeDeviceConfig#builder(String)} sets all of these per device, plus:
 * {@code netdevMtu} (the MTU the port's active MTU derives from; default the interface's, 65536 for loopback
 * addresses, else 1500), {@code txFaults}/{@code rxFaults} ({@link io.jhca.rxe.link.LinkFaults}: drop, duplicate,
 * reorder, delay, corrupt probabilities per direction) with {@code faultSeed}, {@code socketBuffer} (receive and
 * send buffer asked for, default 4 MiB; past net.core.rmem_max/wmem_max with CAP_NET_ADMIN, see
 * {@link io.jhca.rxe.link.SocketBuffers}) and {@code pcap} (trace every packet sent
 * and received to a pcap file tshark decodes as "RRoCE") and {@code link} (a {@link io.jhca.rxe.link.LinkOpener} that
 * gives the device another {@link io.jhca.rxe.link.Link} than a UDP socket, e.g. one replaying captured packets) and
 * {@code maxSrqSge} (the SGEs an SRQ WQE may have, default 27 as Linux rxe, up to 32: the ConnectX model's wire takes
 * 31);
 * {@link io.jhca.rxe.RxeProvider#open(RxeDeviceConfig)}
 * opens such a device whatever the environment says.
 *
 * <h2>Progress</h2>
 * {@link io.jhca.rxe.ProgressMode#THREAD}: each device runs its engine on a daemon thread (an Agrona AgentRunner with
 * the configured idle strategy); a post wakes a sleeping engine thread ({@code Engine.notifyPosted}). An application
 * may call {@code Context.progress()} there too: the call runs a duty cycle on its thread when no other cycle runs,
 * and while a polling loop keeps calling it (two calls within 50 us) the engine thread parks, taking over when the
 * calls stop ({@code Engine.progressFromCaller}). A poll that finds its CQ empty does the same unless the CQ is armed
 * for an event ({@code Engine.progressFromPoll}), so an application that never calls progress but polls its CQs
 * drives the device from its polling loop; the poll that returns a completion, or an arm, ends the loop and wakes a
 * parked engine thread at once ({@code Engine.loopEnded}), for the wait that follows may be on memory, where no call
 * of ours comes, or asleep for the event, which the engine thread raises.
 * {@link io.jhca.rxe.ProgressMode#CALLER}: no thread; the application drives the
 * engine by calling {@code Context.progress()} from its polling loop (one duty cycle per call), and then all calls on
 * that device must come from that one thread. Posting is single-writer per queue and polling single-reader per CQ in
 * both modes; WQEs and CQEs are handed over with release/acquire stores of ring indices, never with locks.
 *
 * <h2>What it reports</h2>
 * Linux rxe's device attributes (rxe_param.h: vendor 0xFFFFFF, max_qp_wr 2^20, 32 SGEs, max_cqe 32767,
 * max_qp_rd_atom 128, max_inline_data 400, ...), one ACTIVE Ethernet port with max MTU 4096 and active MTU the
 * largest IB MTU within netdev MTU - 80 (loopback: 4096, 1500: 1024), a GID table of 1024 entries with index 0 the
 * IPv6 link-local GID (fe80::EUI-64) and index 1 the device address ({@code ::ffff:a.b.c.d} for IPv4), and a node
 * GUID that is the EUI-64 of a locally administered MAC derived from the IP (02:00:a:b:c:d). A device on a network
 * interface instead takes the interface's MAC and MTU, binds UDP 4791 on every address of the interface (IPv4 and
 * IPv6) and has Linux rxe's GID table over them ({@link io.jhca.rxe.RxeGidTable}: the default GID, then each
 * address, IPv4 first, all RoCE v2); a QP sends from the address its AV's sgid_index names. QP numbers start at
 * 0x11; QP1 (GSI) is not provided. Memory keys are a 24-bit index and an 8-bit tag; rkey = lkey when remote access
 * was granted, else 0. Per-device counters ({@code RxeContext.counters()}, {@code Context.statistics()}) use rxe's
 * hw_counters names, add bytes each way, retransmitted packets, ACK timeouts, NAKs sent and received by kind, ghost
 * responses and ICRC outcomes, and count every dropped packet by reason; each QP keeps its share
 * ({@code QueuePair.statistics()}).
 *
 * <h2>ICRC over IPv4</h2>
 * The ICRC covers the IPv4 Identification, which a UDP socket does not choose. The link sets IP_PMTUDISC_DO, so
 * Linux sends DF datagrams with ID 0 from the unconnected socket, and our ICRCs are computed for ID 0 (verified on
 * captured packets). On receive the IP header is invisible. {@code auto} (default) first checks all 32 bits for
 * ID 0 (jhca peers); a packet that fails that is taken as sent with an unknown ID, which is solved for from the
 * ICRC, and the remaining 16 bits are checked (Linux rxe peers, which send non-zero IDs). The device counts each
 * outcome ({@code icrc_checked_full}, {@code icrc_recovered_id}). {@code strict} accepts ID 0 only (all 32 bits,
 * nothing recovered: a Linux rxe peer over IPv4 fails); {@code recover} accepts what {@code auto} accepts (kept for
 * configurations that name it). IPv6 has no such field: both sides compute exact ICRCs and check all 32 bits.
 *
 * <h2>Multicast</h2>
 * {@code QueuePair.attachMcast} maps a multicast GID to its IP group as Linux rxe does ({@code ::ffff:a.b.c.d} is the
 * IPv4 group a.b.c.d, {@code ff00::/8} an IPv6 group). The device's first member joins the group on the device's
 * interface with a UDP socket bound to {@code group:4791} (SO_REUSEADDR, IP_MULTICAST_ALL off: every device and
 * process of the host binds it and gets its own copy); the last member's detach leaves it. A datagram for the group
 * must be a UD SEND to QPN 0xFFFFFF; its ICRC is checked with the group as destination address, and every attached
 * QP in RTR or later gets a copy, each checking its Q_Key. Sends to a group leave by the device's interface
 * (IP_MULTICAST_IF) with the kernel's multicast hop limit 1 and loop back to the host's members, the sending
 * device's own QPs included, except the sending QP itself if it was created with
 * {@code blockSelfMulticastLoopback()}. Limits as rxe_param.h: 8192 groups, 56 QPs per
 * group. The loopback interface carries IPv4 groups (devices on 127.0.0.x of one namespace share them); IPv6 groups
 * need an interface with multicast (lo in a fresh namespace refuses to send them). Multicast datagrams bypass a
 * {@code FaultyLink}'s faults.
 *
 * <h2>JVM options</h2>
 * The link reaches the socket's file descriptor through {@code sun.nio.ch.SelChImpl#getFDVal} and Agrona reaches
 * {@code jdk.internal.misc.Unsafe}: run with {@code --add-opens java.base/sun.nio.ch=ALL-UNNAMED
 * --add-opens java.base/jdk.internal.misc=ALL-UNNAMED}.
 */
package io.jhca.rxe;
