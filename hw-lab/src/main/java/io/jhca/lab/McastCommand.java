package io.jhca.lab;

import io.jhca.verbs.Gid;
import io.jhca.verbs.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * {@code hwlab mcast send|recv}: a UD multicast feed, the shape of a market-data feed. A publisher sends numbered
 * datagrams to a group; any number of subscribers, in any process, attach to the group and count what they got and
 * what they lost from the sequence numbers. There is no exchange between the two: subscribers may come and go
 * mid-stream, which a connected benchmark's handshake (ib_send_bw --mcg) does not allow.
 */
@Command(name = "mcast", mixinStandardHelpOptions = true,
        description = "UD multicast feed: 'send' publishes numbered datagrams to a group, 'recv' subscribes and "
                + "prints per-receiver received, lost and rate.",
        subcommands = {McastSend.class, McastRecv.class})
public final class McastCommand implements Runnable {

    /** perftest's default Q_Key (perftest_parameters.h DEF_QKEY), so its UD peers match ours. */
    static final int DEFAULT_QKEY = 0x11111111;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: send or recv");
    }

    /** Options both sides share. */
    static class Common {
        @Option(names = {"-d", "--ib-dev"}, paramLabel = "DEV", description = "device (default: the first)")
        String device;

        @Option(names = "--mcg", paramLabel = "ADDR", required = true,
                description = "the group: an IPv4 or IPv6 multicast address, or a GID (32 hex digits or 8 groups)")
        String group;

        @Option(names = {"-g", "--gid-idx"}, paramLabel = "GIDX", description = "local GID index (default: first IPv4 one)")
        Integer gidIndex;

        @Option(names = {"-s", "--size"}, paramLabel = "SIZE", description = "message size in bytes, at least "
                + FeedPayload.HEADER + " (default ${DEFAULT-VALUE})")
        int size = 64;

        @Option(names = "--qkey", paramLabel = "QKEY", description = "Q_Key (default 0x11111111, perftest's)")
        String qkey;

        int qkey() {
            return qkey == null ? DEFAULT_QKEY : (int) Long.decode(qkey).longValue();
        }

        Gid mgid() {
            Gid g;
            if (group.replace(":", "").matches("[0-9a-fA-F]{32}")) {
                g = Gid.parse(group);
            } else {
                try {
                    g = Gid.of(InetAddress.getByName(group));
                } catch (UnknownHostException e) {
                    throw new VerbsException(VerbsException.EINVAL, "--mcg " + group + ": not an address: " + e.getMessage());
                }
            }
            if (!g.isMulticast()) {
                throw new VerbsException(VerbsException.EINVAL, "--mcg " + group + " is not a multicast group"
                        + " (IPv4 224.0.0.0/4 or IPv6 ff00::/8)");
            }
            return g;
        }

        void checkSize() {
            if (size < FeedPayload.HEADER) {
                throw new VerbsException(VerbsException.EINVAL, "-s " + size + ": a feed message carries a "
                        + FeedPayload.HEADER + "-byte header (sequence number, count, session)");
            }
        }
    }
}
