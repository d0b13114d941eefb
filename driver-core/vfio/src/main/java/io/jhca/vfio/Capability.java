package io.jhca.vfio;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;

/**
 * One entry of a VFIO info capability chain ({@code struct vfio_info_cap_header}: u16 id, u16 version, u32 next,
 * linux/vfio.h): its id and version and where its body starts in the info buffer.
 */
public record Capability(int id, int version, int offset) {

    /** Most capabilities a chain may have before it is taken for a loop. */
    static final int MAX_CHAIN = 64;

    /**
     * Walks the chain starting at {@code first} inside {@code info} (of {@code size} valid bytes). Offsets are
     * from the start of the info struct; 0 ends the chain. A header that would run past the buffer, or a chain
     * that does not move forward, is an error (the kernel never produces one; a fake or corrupted buffer might).
     */
    static List<Capability> walk(final DirectBuffer info, final int first, final int size, final String device,
                                 final String call) {
        final List<Capability> caps = new ArrayList<>();
        int at = first;
        while (at != 0) {
            if (at < 0 || at > size - VfioAbi.CAP_HEADER_SIZE || (at & 3) != 0 || caps.size() == MAX_CHAIN) {
                throw VfioException.refused(device, call, "malformed capability chain: header at offset " + at
                    + " in " + size + " bytes of info");
            }
            caps.add(new Capability(info.getShort(at + VfioAbi.CAP_HEADER_ID) & 0xffff,
                info.getShort(at + VfioAbi.CAP_HEADER_VERSION) & 0xffff, at));
            final int next = info.getInt(at + VfioAbi.CAP_HEADER_NEXT);
            if (next != 0 && next <= at) {
                throw VfioException.refused(device, call, "malformed capability chain: next offset " + next
                    + " does not follow " + at);
            }
            at = next;
        }
        return caps;
    }
}
