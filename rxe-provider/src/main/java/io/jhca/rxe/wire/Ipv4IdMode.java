package io.jhca.rxe.wire;

/**
 * How {@link Icrc#verifyIpv4} treats the IPv4 Identification field, which the ICRC covers but a receiver
 * behind a UDP socket cannot see (rocev2.md §2.4).
 */
public enum Ipv4IdMode {
    /**
     * The default: a packet whose ICRC matches with Identification = 0 has passed the full 32-bit check (what
     * jhca peers send); any other packet falls back to {@link #RECOVER_ID}'s solving for the ID (what Linux rxe
     * peers need). A device counts the two outcomes apart (icrc_checked_full, icrc_recovered_id), so a link
     * where every packet was checked in full shows it.
     */
    AUTO,
    /**
     * Assume Identification = 0, what jhca's own senders put on the wire (unconnected UDPv4 socket with
     * IP_PMTUDISC_DO). All 32 ICRC bits are checked, as strong as rxe's own check. Packets from Linux rxe, which
     * uses non-zero IDs, fail.
     */
    STRICT_ID_ZERO,
    /**
     * Treat Identification as unknown and solve for it. ICRC(id) = ICRC(0) XOR M_n(id) with M_n linear and
     * injective (n = bytes after the ID field), so the 32-bit syndrome ICRC_received XOR ICRC(0) either lies in
     * the 16-dimensional image of M_n (exactly one id fits; it is returned) or not (rejected). 16 ICRC bits are
     * spent on the unknown ID; the other 16 check everything else: random corruption passes with probability
     * 2^-16, a corrupted ID is not detectable at all (another ID comes back), and every single-bit error outside
     * the ID field is detected while fewer than 26767 bytes follow the ID field (all RoCE MTUs; the first
     * undetected single-bit error sits 214135 bits after the ID; both facts are tested).
     * A packet sent with ID 0 yields syndrome 0 and is thereby checked on all 32 bits, so this mode accepts
     * exactly what {@link #AUTO} accepts; it is kept for configurations that name it.
     */
    RECOVER_ID
}
