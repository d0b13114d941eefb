package io.jhca.lab;

/** The UDP ping-pong floors a WRITE or SEND latency test prints, each a baseline of plain sockets, no RDMA. */
enum UdpFloor {
    /** One datagram each way. */
    PLAIN("", "udp_baseline"),
    /** Each message's 20-byte ACK back, sent by a call of its own before the answer: the datagrams RC moves. */
    ACKS(" with RoCE's ACKs", "udp_baseline_with_acks"),
    /**
     * The same datagrams, each ACK handed to the kernel with the message after it in one call (one GSO datagram on
     * loopback, else sendmmsg), over unconnected sockets: the calls jhca's rxe makes, so that what jhca adds to it is
     * its own stack's ({@link BatchedAckFloor}).
     */
    BATCHED_ACKS(" with batched ACKs", "udp_baseline_with_batched_acks");

    /** What follows "UDP floor" in the tool's lines. */
    final String suffix;
    /** Its key in the JSON results. */
    final String json;

    UdpFloor(String suffix, String json) {
        this.suffix = suffix;
        this.json = json;
    }
}
