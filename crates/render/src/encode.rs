//! Writing pictures: PNG files of one canvas, and [`GifWriter`], an
//! animated GIF fed one canvas a frame.
//!
//! Pictures drawn by [`draw_scene`](crate::draw_scene) hold few colours
//! (flat shading in a few steps), so both formats first try an exact
//! palette: a PNG with at most 256 colours is written indexed, and each GIF
//! frame gets its own exact palette. Only a frame with more colours than a
//! palette holds is quantised (the `gif` crate's NeuQuant). A GIF frame
//! after the first covers only the rectangle that changed since the frame
//! before, with the unchanged pixels inside it transparent, which is most
//! of the saving on scenes where much stands still.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use crate::canvas::{Canvas, Rgb};

/// Why a picture could not be written.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The file could not be created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The PNG encoder refused.
    #[error("PNG: {0}")]
    Png(#[from] png::EncodingError),
    /// The GIF encoder refused.
    #[error("GIF: {0}")]
    Gif(#[from] gif::EncodingError),
    /// The picture is larger than the format holds.
    #[error("{width} × {height} is too large for a GIF (at most 65 535 a side)")]
    TooLarge {
        /// Width asked for.
        width: u32,
        /// Height asked for.
        height: u32,
    },
}

/// The colours of `pixels` as a palette and each pixel's index in it, if
/// there are at most `max` colours.
pub fn exact_palette(pixels: &[Rgb], max: usize) -> Option<(Vec<Rgb>, Vec<u8>)> {
    let mut index: HashMap<Rgb, u8> = HashMap::new();
    let mut palette = Vec::new();
    let mut indices = Vec::with_capacity(pixels.len());
    let mut last: Option<(Rgb, u8)> = None;
    for &p in pixels {
        let i = match last {
            Some((c, i)) if c == p => i,
            _ => match index.get(&p) {
                Some(&i) => i,
                None => {
                    if palette.len() >= max.min(256) {
                        return None;
                    }
                    let i = palette.len() as u8;
                    palette.push(p);
                    index.insert(p, i);
                    i
                }
            },
        };
        last = Some((p, i));
        indices.push(i);
    }
    Some((palette, indices))
}

fn flat(palette: &[Rgb]) -> Vec<u8> {
    palette.iter().flat_map(|c| [c.0, c.1, c.2]).collect()
}

/// The canvas as PNG bytes (indexed if it has at most 256 colours).
pub fn png_bytes(canvas: &Canvas) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, canvas.width(), canvas.height());
        encoder.set_depth(png::BitDepth::Eight);
        let data = match exact_palette(canvas.pixels(), 256) {
            Some((palette, indices)) => {
                encoder.set_color(png::ColorType::Indexed);
                encoder.set_palette(flat(&palette));
                indices
            }
            None => {
                encoder.set_color(png::ColorType::Rgb);
                canvas.rgb_bytes()
            }
        };
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&data)?;
        writer.finish()?;
    }
    Ok(out)
}

/// Writes the canvas to a PNG file.
pub fn write_png(canvas: &Canvas, path: &Path) -> Result<(), EncodeError> {
    let bytes = png_bytes(canvas)?;
    std::fs::write(path, bytes).map_err(|source| EncodeError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// An animated GIF, looping forever, written one canvas at a time (every
/// canvas the size given at the start).
pub struct GifWriter<W: Write> {
    encoder: gif::Encoder<W>,
    width: u32,
    height: u32,
    previous: Option<Vec<Rgb>>,
}

impl<W: Write> GifWriter<W> {
    /// Starts a GIF of `width × height` pixels on `out`.
    pub fn new(out: W, width: u32, height: u32) -> Result<GifWriter<W>, EncodeError> {
        let (Ok(w), Ok(h)) = (u16::try_from(width), u16::try_from(height)) else {
            return Err(EncodeError::TooLarge { width, height });
        };
        let mut encoder = gif::Encoder::new(out, w, h, &[])?;
        encoder.set_repeat(gif::Repeat::Infinite)?;
        Ok(GifWriter {
            encoder,
            width,
            height,
            previous: None,
        })
    }

    /// Adds `canvas` (of the GIF's size; a canvas of another size is
    /// cropped or padded with black) shown for `delay` hundredths of a second.
    pub fn frame(&mut self, canvas: &Canvas, delay: u16) -> Result<(), EncodeError> {
        let pixels = self.fit(canvas);
        let (x0, y0, x1, y1) = match &self.previous {
            None => (0, 0, self.width, self.height),
            Some(prev) => changed_rect(prev, &pixels, self.width).unwrap_or((0, 0, 1, 1)),
        };
        let (w, h) = (x1 - x0, y1 - y0);
        // The rectangle's pixels; those unchanged since the previous frame
        // become transparent (`None`).
        let mut region: Vec<Option<Rgb>> = Vec::with_capacity((w * h) as usize);
        for y in y0..y1 {
            for x in x0..x1 {
                let i = (y * self.width + x) as usize;
                let same = self.previous.as_ref().is_some_and(|p| p[i] == pixels[i]);
                region.push((!same).then_some(pixels[i]));
            }
        }
        let opaque: Vec<Rgb> = region.iter().flatten().copied().collect();
        let has_transparent = opaque.len() < region.len();
        let limit = if has_transparent { 255 } else { 256 };
        let mut frame = match exact_palette(&opaque, limit) {
            Some((mut palette, indices)) => {
                let transparent = palette.len() as u8;
                if has_transparent {
                    palette.push(Rgb(0, 0, 0));
                }
                let mut next = indices.into_iter();
                let buffer: Vec<u8> = region
                    .iter()
                    .map(|p| match p {
                        Some(_) => next.next().unwrap_or(0),
                        None => transparent,
                    })
                    .collect();
                gif::Frame {
                    palette: Some(flat(&palette)),
                    transparent: has_transparent.then_some(transparent),
                    buffer: buffer.into(),
                    ..gif::Frame::default()
                }
            }
            None => {
                let mut rgba: Vec<u8> = region
                    .iter()
                    .flat_map(|p| match p {
                        Some(c) => [c.0, c.1, c.2, 255],
                        None => [0, 0, 0, 0],
                    })
                    .collect();
                gif::Frame::from_rgba_speed(w as u16, h as u16, &mut rgba, 10)
            }
        };
        frame.left = x0 as u16;
        frame.top = y0 as u16;
        frame.width = w as u16;
        frame.height = h as u16;
        frame.delay = delay;
        frame.dispose = gif::DisposalMethod::Keep;
        self.encoder.write_frame(&frame)?;
        self.previous = Some(pixels);
        Ok(())
    }

    /// Finishes the GIF and hands back the output.
    pub fn finish(self) -> Result<W, EncodeError> {
        Ok(self.encoder.into_inner()?)
    }

    /// The canvas's pixels at the GIF's size.
    fn fit(&self, canvas: &Canvas) -> Vec<Rgb> {
        if canvas.width() == self.width && canvas.height() == self.height {
            return canvas.pixels().to_vec();
        }
        let mut sized = Canvas::new(self.width, self.height);
        sized.blit(canvas, 0, 0);
        sized.pixels().to_vec()
    }
}

/// The smallest rectangle `(x0, y0, x1, y1)` (ends exclusive) holding every
/// pixel that differs between `a` and `b`, rows `width` long; `None` if
/// none does.
fn changed_rect(a: &[Rgb], b: &[Rgb], width: u32) -> Option<(u32, u32, u32, u32)> {
    let width = width as usize;
    let mut rect: Option<(usize, usize, usize, usize)> = None;
    for (y, (ra, rb)) in a.chunks(width).zip(b.chunks(width)).enumerate() {
        if ra == rb {
            continue;
        }
        let first = ra.iter().zip(rb).position(|(p, q)| p != q).unwrap_or(0);
        let last = ra
            .iter()
            .zip(rb)
            .rposition(|(p, q)| p != q)
            .unwrap_or(first);
        rect = Some(match rect {
            None => (first, y, last + 1, y + 1),
            Some((x0, y0, x1, _)) => (x0.min(first), y0, x1.max(last + 1), y + 1),
        });
    }
    rect.map(|(x0, y0, x1, y1)| (x0 as u32, y0 as u32, x1 as u32, y1 as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_palette_indexes_every_pixel_or_gives_up() {
        let px = [Rgb(1, 1, 1), Rgb(2, 2, 2), Rgb(1, 1, 1)];
        let (palette, indices) = exact_palette(&px, 256).unwrap();
        assert_eq!(palette, vec![Rgb(1, 1, 1), Rgb(2, 2, 2)]);
        assert_eq!(indices, vec![0, 1, 0]);
        assert!(exact_palette(&px, 1).is_none());
    }

    #[test]
    fn png_of_few_and_many_colours() {
        let mut c = Canvas::new(32, 16);
        c.fill_rect(0, 0, 8, 8, Rgb(200, 10, 10));
        let few = png_bytes(&c).unwrap();
        assert!(few.starts_with(b"\x89PNG\r\n\x1a\n"));
        for (i, x) in (0..32)
            .flat_map(|x| (0..16).map(move |y| (x, y)))
            .enumerate()
        {
            c.put(x.0, x.1, Rgb(i as u8, (i / 256) as u8, 7));
        }
        let many = png_bytes(&c).unwrap();
        assert!(many.starts_with(b"\x89PNG"));
    }

    #[test]
    fn gif_frames_cover_only_what_changed() {
        let mut out = GifWriter::new(Vec::new(), 16, 8).unwrap();
        let mut c = Canvas::new(16, 8);
        c.clear(Rgb(10, 20, 30));
        out.frame(&c, 5).unwrap();
        out.frame(&c, 5).unwrap(); // nothing changed
        c.put(3, 4, Rgb(250, 0, 0));
        c.put(9, 6, Rgb(0, 250, 0));
        out.frame(&c, 5).unwrap();
        let bytes = out.finish().unwrap();
        assert!(bytes.starts_with(b"GIF89a"));
        assert_eq!(bytes.last(), Some(&0x3b));
        assert_eq!(
            changed_rect(&[Rgb(0, 0, 0); 4], &[Rgb(0, 0, 0); 4], 2),
            None
        );
        let mut b = [Rgb(0, 0, 0); 6];
        b[5] = Rgb(1, 1, 1);
        b[1] = Rgb(1, 1, 1);
        assert_eq!(changed_rect(&[Rgb(0, 0, 0); 6], &b, 3), Some((1, 0, 3, 2)));
        assert!(matches!(
            GifWriter::new(Vec::new(), 70_000, 8),
            Err(EncodeError::TooLarge { .. })
        ));
    }
}
