package io.jhca.lab;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.geom.Line2D;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;

/** A {@link Chart.Canvas} on a java.awt image (works headless: -Djava.awt.headless=true), saved as PNG. */
public final class PngCanvas implements Chart.Canvas {
    private final BufferedImage img;
    private final Graphics2D g;

    public PngCanvas(int width, int height) {
        img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
    }

    private void stroke(int rgb, float width, boolean dashed) {
        g.setColor(new Color(rgb));
        g.setStroke(dashed ? new BasicStroke(width, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10f, new float[] {6f, 4f}, 0f)
                : new BasicStroke(width, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
    }

    @Override
    public void line(double x1, double y1, double x2, double y2, int rgb, float width, boolean dashed) {
        stroke(rgb, width, dashed);
        g.draw(new Line2D.Double(x1, y1, x2, y2));
    }

    @Override
    public void polyline(double[] xs, double[] ys, int n, int rgb, float width, boolean dashed) {
        if (n == 0) {
            return;
        }
        stroke(rgb, width, dashed);
        Path2D.Double p = new Path2D.Double();
        p.moveTo(xs[0], ys[0]);
        for (int i = 1; i < n; i++) {
            p.lineTo(xs[i], ys[i]);
        }
        g.draw(p);
    }

    @Override
    public void text(String s, double x, double y, int size, int anchor, boolean vertical, boolean bold) {
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, bold ? Font.BOLD : Font.PLAIN, size));
        int w = g.getFontMetrics().stringWidth(s);
        double dx = anchor < 0 ? 0 : anchor == 0 ? -w / 2.0 : -w;
        AffineTransform saved = g.getTransform();
        g.translate(x, y);
        if (vertical) {
            g.rotate(-Math.PI / 2);
        }
        g.drawString(s, (float) dx, 0f);
        g.setTransform(saved);
    }

    public void save(Path file) throws IOException {
        g.dispose();
        if (!ImageIO.write(img, "png", file.toFile())) {
            throw new IOException("no PNG writer available");
        }
    }
}
