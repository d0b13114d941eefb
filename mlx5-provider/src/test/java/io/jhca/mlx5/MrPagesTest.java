package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The MTT of an MR lists one 8-byte entry per 4 KiB page the span touches ({@link Mlx5Mr#pages}); the CREATE_MKEY
 * input carries them all, so a span of more than {@code Integer.MAX_VALUE / 8} pages would overflow the command
 * length and is refused before any command is built.
 */
class MrPagesTest {

    private static final long PAGE = Mlx5Mr.PAGE;
    private static final int MAX_PAGES = Integer.MAX_VALUE / 8;

    @Test
    void pagesTouchedBySpan() {
        assertEquals(0, Mlx5Mr.pages(0x1234, 0), "an empty MR has no translation entry");
        assertEquals(1, Mlx5Mr.pages(0x1000, PAGE));
        assertEquals(2, Mlx5Mr.pages(0x1fff, 2), "two bytes across a page boundary");
    }

    @Test
    void theMostPagesAnMkeyCommandCanListAndOneMore() {
        assertEquals(MAX_PAGES, Mlx5Mr.pages(0, MAX_PAGES * PAGE));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Mlx5Mr.pages(0, (MAX_PAGES + 1L) * PAGE));
        assertTrue(e.getMessage().contains("too many translation entries"), e.getMessage());
        // one byte into the next page is one page more, too
        assertThrows(IllegalArgumentException.class, () -> Mlx5Mr.pages(PAGE - 1, MAX_PAGES * PAGE));
    }
}
