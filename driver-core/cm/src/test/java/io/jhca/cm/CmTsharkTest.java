package io.jhca.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;

/**
 * The CM MADs jhca puts on the wire, decoded by Wireshark's InfiniBand dissector (tshark) from a capture of a
 * connect, disconnect and a rejected connect between two rxe devices: every field tshark shows must be what the
 * connection used (QPNs, PSNs, addresses, ports, communication IDs, timeouts, the REJ reason).
 */
class CmTsharkTest {
    @TempDir
    Path dir;
    int mtu;

    static List<String[]> tshark(Path pcap, String filter, String... fields) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("tshark", "-r", pcap.toString(), "-Y", filter, "-T", "fields",
                "-E", "separator=|", "-E", "occurrence=f"));
        for (String f : fields) {
            cmd.add("-e");
            cmd.add(f);
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("tshark failed: " + err);
        }
        List<String[]> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                rows.add(line.split("\\|", -1));
            }
        }
        return rows;
    }

    static long num(String s) {
        return s.startsWith("0x") ? Long.parseUnsignedLong(s.substring(2), 16) : Long.parseLong(s);
    }

    @Test
    void cmMadsDecodeToWhatTheConnectionUsed() throws Exception {
        Path pcap = dir.resolve("cm.pcap");
        InetAddress ip1 = InetAddress.getByName("127.0.0.1");
        InetAddress ip2 = InetAddress.getByName("127.0.0.2");
        QueuePair cq;
        QueuePair sq;
        int clientPort;
        try (Context c0 = RxeProvider.open(RxeDeviceConfig.builder("rxe0").address("127.0.0.1").pcap(pcap).build());
             Context c1 = Verbs_open("rxe1");
             CmEventChannel ch = CmEventChannel.create()) {
            CmDevices.attach(c0);
            CmDevices.attach(c1);
            ProtectionDomain pd0 = c0.allocatePd();
            ProtectionDomain pd1 = c1.allocatePd();
            CompletionQueue cq0 = c0.createCq(8);
            CompletionQueue cq1 = c1.createCq(8);
            CmId listener = ch.createId();
            listener.bindAddr(new InetSocketAddress(ip1, 7474));
            listener.listen(2);
            CmId cl = ch.createId();
            cl.resolveAddr(ip2, new InetSocketAddress(ip1, 7474), 1000);
            ch.expect(CmEventType.ADDR_RESOLVED, 5000);
            cl.resolveRoute(1000);
            ch.expect(CmEventType.ROUTE_RESOLVED, 5000);
            cq = cl.createQp(pd1, QpInitAttributes.rc(cq1, cq1));
            clientPort = cl.localAddress().getPort();
            cl.connect(ConnParam.defaults().cmResponseTimeout(16).localAckTimeout(12));
            CmId sv = ch.expect(CmEventType.CONNECT_REQUEST, 5000).id();
            sq = sv.createQp(pd0, QpInitAttributes.rc(cq0, cq0));
            sv.accept(ConnParam.defaults());
            ch.expect(CmEventType.ESTABLISHED, 5000);
            ch.expect(CmEventType.ESTABLISHED, 5000);
            cl.disconnect();
            int down = 0;
            while (down < 2) { // a side's time wait may end before the other hears the DREP
                CmEvent e = ch.get(5, TimeUnit.SECONDS);
                assertEquals(true, e != null && (e.type() == CmEventType.DISCONNECTED
                        || e.type() == CmEventType.TIMEWAIT_EXIT), "event " + e);
                down += e.type() == CmEventType.DISCONNECTED ? 1 : 0;
            }
            CmId nobody = ch.createId();
            nobody.resolveAddr(ip2, new InetSocketAddress(ip1, 7475), 1000);
            ch.expect(CmEventType.ADDR_RESOLVED, 5000);
            nobody.resolveRoute(1000);
            ch.expect(CmEventType.ROUTE_RESOLVED, 5000);
            QueuePair nq = nobody.createQp(pd1, QpInitAttributes.rc(cq1, cq1));
            nobody.connect(ConnParam.defaults());
            CmEvent e;
            do { // the first connection's two TIMEWAIT_EXITs may come first
                e = ch.get(5, TimeUnit.SECONDS);
            } while (e != null && e.type() == CmEventType.TIMEWAIT_EXIT);
            assertEquals(CmEventType.REJECTED, e == null ? null : e.type());
            CmDevices.detach(c0);
            CmDevices.detach(c1);
            long cRq = cq.query().rqPsn();
            long sRq = sq.query().rqPsn();
            int cQpn = cq.qpn();
            mtu = c1.queryPort(1).activeMtu().value();
            int sQpn = sq.qpn();
            for (AutoCloseable a : new AutoCloseable[] {nq, cq, sq, cq0, cq1, pd0, pd1, listener, cl, sv, nobody}) {
                a.close();
            }
            check(pcap, cQpn, sQpn, cRq, sRq, clientPort);
        }
    }

    private static Context Verbs_open(String name) {
        return io.jhca.verbs.Verbs.open(name);
    }

    private void check(Path pcap, int cQpn, int sQpn, long cRq, long sRq, int clientPort) throws Exception {
        List<String[]> mads = tshark(pcap, "infiniband.mad", "infiniband.mad.attributeid", "infiniband.bth.destqp",
                "infiniband.deth.q_key", "infiniband.deth.srcqp", "infiniband.mad.mgmtclass",
                "infiniband.mad.classversion", "infiniband.mad.method");
        List<Long> attrs = new ArrayList<>();
        for (String[] r : mads) {
            attrs.add(num(r[0]));
            assertEquals(1, num(r[1]), "to QP1");
            assertEquals(0x80010000L, num(r[2]), "GSI Q_Key");
            assertEquals(1, num(r[3]), "from QP1");
            assertEquals(7, num(r[4]));
            assertEquals(2, num(r[5]));
            assertEquals(3, num(r[6]), "ComMgtSend");
        }
        // what rxe0 saw and sent: REQ in, REP out, RTU in, DREQ in, DREP out, REQ in, REJ out
        assertEquals(List.of(0x10L, 0x13L, 0x14L, 0x15L, 0x16L, 0x10L, 0x12L), attrs);

        String[] req = tshark(pcap, "infiniband.mad.attributeid == 0x0010", "infiniband.cm.req.serviceid.dport",
                "infiniband.cm.req.localqpn", "infiniband.cm.req.startpsn", "infiniband.cm.req.pkey",
                "infiniband.cm.req.prim_localgid_ipv4", "infiniband.cm.req.prim_remotegid_ipv4",
                "infiniband.cm.req.prim_hoplim", "infiniband.cm.req.ip_cm.ipv", "infiniband.cm.req.ip_cm.sport",
                "infiniband.cm.req.ip_cm.sip4", "infiniband.cm.req.ip_cm.dip4", "infiniband.cm.req.remoteresptout",
                "infiniband.cm.req.localresptout", "infiniband.cm.req.retrcount", "infiniband.cm.req.rnrretrcount",
                "infiniband.cm.req.maxcmretr", "infiniband.cm.req.transpsvctype", "infiniband.cm.req.responderres",
                "infiniband.cm.req.initdepth", "infiniband.cm.req.prim_localacktout", "infiniband.cm.req.pppmtu",
                "infiniband.cm.req.prim_locallid", "infiniband.cm.req.serviceid.protocol").get(0);
        assertEquals(7474, num(req[0]));
        assertEquals(cQpn, num(req[1]));
        assertEquals(cRq, num(req[2]), "the REQ's starting PSN is the active side's receive PSN");
        assertEquals(0xFFFF, num(req[3]));
        assertEquals("127.0.0.2", req[4]);
        assertEquals("127.0.0.1", req[5]);
        assertEquals(64, num(req[6]));
        assertEquals(4, num(req[7]));
        assertEquals(clientPort, num(req[8]));
        assertEquals("127.0.0.2", req[9]);
        assertEquals("127.0.0.1", req[10]);
        assertEquals(16, num(req[11]));
        assertEquals(16, num(req[12]));
        assertEquals(7, num(req[13]));
        assertEquals(7, num(req[14]));
        assertEquals(15, num(req[15]));
        assertEquals(0, num(req[16]), "RC");
        assertEquals(1, num(req[17]));
        assertEquals(1, num(req[18]));
        assertEquals(12, num(req[19]));
        assertEquals(mtu, num(req[20]), "the port's active MTU");
        assertEquals(0xFFFF, num(req[21]));
        assertEquals(6, num(req[22]), "TCP port space 0x0106");

        String[] rep = tshark(pcap, "infiniband.mad.attributeid == 0x0013", "infiniband.cm.rep.localqpn",
                "infiniband.cm.rep.startpsn", "infiniband.cm.rep.respres", "infiniband.cm.rep.initdepth",
                "infiniband.cm.rep.rnrretrcount", "infiniband.cm.rep.remotecommid").get(0);
        assertEquals(sQpn, num(rep[0]));
        assertEquals(sRq, num(rep[1]), "the REP's starting PSN is the passive side's receive PSN");
        assertEquals(1, num(rep[2]));
        assertEquals(1, num(rep[3]));
        assertEquals(7, num(rep[4]));
        long clientCommId = num(rep[5]);

        String[] rtu = tshark(pcap, "infiniband.mad.attributeid == 0x0014", "infiniband.cm.rtu.localcommid",
                "infiniband.cm.rtu.remotecommid").get(0);
        assertEquals(clientCommId, num(rtu[0]));
        long serverCommId = num(rtu[1]);
        String[] dreq = tshark(pcap, "infiniband.mad.attributeid == 0x0015", "infiniband.cm.dreq.localcommid",
                "infiniband.cm.dreq.remotecommid", "infiniband.cm.req.remoteqpneecn").get(0);
        assertEquals(clientCommId, num(dreq[0]));
        assertEquals(serverCommId, num(dreq[1]));
        assertEquals(sQpn, num(dreq[2]), "a DREQ names the receiver's QP");
        String[] drep = tshark(pcap, "infiniband.mad.attributeid == 0x0016", "infiniband.cm.drsp.localcommid",
                "infiniband.cm.drsp.remotecommid").get(0);
        assertEquals(serverCommId, num(drep[0]));
        assertEquals(clientCommId, num(drep[1]));
        String[] rej = tshark(pcap, "infiniband.mad.attributeid == 0x0012", "infiniband.cm.rej.reason",
                "infiniband.cm.rej.msgrej", "infiniband.cm.rej.localcommid").get(0);
        assertEquals(8, num(rej[0]), "INVALID_SERVICE_ID");
        assertEquals(0, num(rej[1]), "the REQ is rejected");
        assertEquals(0, num(rej[2]), "no local connection for an unknown service");
    }
}
