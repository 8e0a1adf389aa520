//! Trains a query adapter for a sentence-transformers model (see
//! `SentenceEmbedder::query_adapter`): a linear map `W` of search requests' vectors, so that a
//! request lands nearer the tool it means, while tools' vectors (and so every vectors' cache) stay
//! the model's own. `scripts/train-query-adapter.sh` runs it on the public API descriptions that
//! `scripts/tune-model.py` takes its pairs from; the adapter it wrote for all-MiniLM-L6-v2 is
//! `models/all-MiniLM-L6-v2/query-adapter.safetensors`, which `scripts/fetch-model.sh` puts into
//! the model's folder (figures in `bench/retrieval.md`, "Query adapter").
//!
//! ```sh
//! cargo run --release --features embeddings --example train_query_adapter -- \
//!     --model .cache/models/all-MiniLM-L6-v2 --batches BATCHES.json --out query-adapter.safetensors
//! ```
//!
//! BATCHES.json is a list of batches, each a list of `[request, tool text]` pairs
//! (`scripts/tune-model.py --write-batches`: 32 operations of one API per batch, so that the other
//! 31 are near neighbours to tell apart). The loss is sentence-transformers'
//! MultipleNegativesRankingLoss: the cross-entropy of each request's similarities (×20) to the
//! tools of its batch, its own tool being the right answer. `W` starts as the identity and takes
//! one pass of Adam (learning rate 2e-4) over the batches in a seeded order; `--seeds N` (default
//! 5) trains N times, each seed with its own order and its own tenth of the batches held out to
//! report how often the right tool ranks first in its batch, and averages the N maps. The
//! vectors are the model's own (int8 products, texts cut at 128 tokens, the cut
//! `HybridRanker::from_model` used when the committed adapter was trained; it cuts at 96 now,
//! which requests rarely reach). About a minute on 2 cores, most of it embedding.

#[cfg(not(feature = "embeddings"))]
fn main() -> std::process::ExitCode {
    eprintln!("train_query_adapter needs `--features embeddings`");
    std::process::ExitCode::FAILURE
}

#[cfg(feature = "embeddings")]
fn main() -> std::process::ExitCode {
    match train::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("train_query_adapter: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(feature = "embeddings")]
mod train {
    use std::collections::HashMap;
    use std::path::PathBuf;

    use mcp_tools::deferred::{Embedder, SentenceEmbedder};

    /// The cut of the texts the committed adapter was trained on (so that training again
    /// writes the same file).
    const TRAINED_AT: usize = 128;

    /// The similarity scale of the loss (sentence-transformers' default).
    const SCALE: f64 = 20.0;

    struct Options {
        model: PathBuf,
        batches: PathBuf,
        out: PathBuf,
        lr: f64,
        seeds: u64,
    }

    fn options() -> Result<Options, String> {
        let usage =
            "usage: train_query_adapter --model DIR --batches FILE --out FILE [--lr 2e-4] [--seeds 5]";
        let mut args = std::env::args().skip(1);
        let (mut model, mut batches, mut out, mut lr, mut seeds) = (None, None, None, 2e-4, 5);
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value\n{usage}"));
            match arg.as_str() {
                "--model" => model = Some(PathBuf::from(value()?)),
                "--batches" => batches = Some(PathBuf::from(value()?)),
                "--out" => out = Some(PathBuf::from(value()?)),
                "--lr" => lr = value()?.parse().map_err(|e| format!("--lr: {e}"))?,
                "--seeds" => seeds = value()?.parse().map_err(|e| format!("--seeds: {e}"))?,
                _ => return Err(usage.into()),
            }
        }
        match (model, batches, out) {
            (Some(model), Some(batches), Some(out)) if seeds > 0 => {
                Ok(Options { model, batches, out, lr, seeds })
            }
            _ => Err(usage.into()),
        }
    }

    /// Row-major `rows` × `cols`.
    struct Matrix {
        rows: usize,
        cols: usize,
        data: Vec<f64>,
    }

    impl Matrix {
        fn zeros(rows: usize, cols: usize) -> Matrix {
            Matrix { rows, cols, data: vec![0.0; rows * cols] }
        }

        fn identity(n: usize) -> Matrix {
            let mut m = Matrix::zeros(n, n);
            (0..n).for_each(|i| m.data[i * n + i] = 1.0);
            m
        }

        fn row(&self, i: usize) -> &[f64] {
            &self.data[i * self.cols..(i + 1) * self.cols]
        }
    }

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// How many of a batch's requests rank their own tool first, and the gradient of the loss by
    /// `w` (added to `grad`). `q` and `d` hold the batch's request and tool vectors.
    // Indices are the formulas' own (i, j over the batch, k over the width).
    #[allow(clippy::needless_range_loop)]
    fn step(w: &Matrix, q: &Matrix, d: &Matrix, grad: Option<&mut Matrix>) -> usize {
        let (b, n) = (q.rows, w.rows);
        // U = Q·Wᵀ, Z = U / |U| per row.
        let mut z = Matrix::zeros(b, n);
        let mut norms = vec![0.0; b];
        for i in 0..b {
            for k in 0..n {
                z.data[i * n + k] = dot(w.row(k), q.row(i));
            }
            norms[i] = dot(z.row(i), z.row(i)).sqrt().max(1e-12);
            z.data[i * n..(i + 1) * n].iter_mut().for_each(|x| *x /= norms[i]);
        }
        let mut first = 0;
        // dS = (softmax(S) − I) / B, S = SCALE · Z·Dᵀ.
        let mut ds = Matrix::zeros(b, b);
        for i in 0..b {
            let s: Vec<f64> = (0..b).map(|j| SCALE * dot(z.row(i), d.row(j))).collect();
            let max = s.iter().copied().fold(f64::MIN, f64::max);
            let exp: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
            let sum: f64 = exp.iter().sum();
            first += usize::from((0..b).all(|j| j == i || s[j] < s[i]));
            for j in 0..b {
                ds.data[i * b + j] = (exp[j] / sum - f64::from(u8::from(i == j))) / b as f64;
            }
        }
        if let Some(grad) = grad {
            for i in 0..b {
                // dZ = SCALE · dS·D; dU = (dZ − Z (Z·dZ)) / |U|; dW += dUᵀ·Q.
                let mut dz = vec![0.0; n];
                for j in 0..b {
                    let f = SCALE * ds.data[i * b + j];
                    dz.iter_mut().zip(d.row(j)).for_each(|(x, y)| *x += f * y);
                }
                let along = dot(z.row(i), &dz);
                for k in 0..n {
                    let du = (dz[k] - z.data[i * n + k] * along) / norms[i];
                    let row = &mut grad.data[k * n..(k + 1) * n];
                    row.iter_mut().zip(q.row(i)).for_each(|(g, x)| *g += du * x);
                }
            }
        }
        first
    }

    /// The vectors of a batch's requests and tools.
    fn gather(batch: &[(usize, usize)], vectors: &[Vec<f32>]) -> (Matrix, Matrix) {
        let n = vectors[0].len();
        let mut q = Matrix::zeros(batch.len(), n);
        let mut d = Matrix::zeros(batch.len(), n);
        for (i, &(request, tool)) in batch.iter().enumerate() {
            q.data[i * n..(i + 1) * n]
                .iter_mut()
                .zip(&vectors[request])
                .for_each(|(a, b)| *a = f64::from(*b));
            d.data[i * n..(i + 1) * n].iter_mut().zip(&vectors[tool]).for_each(|(a, b)| *a = f64::from(*b));
        }
        (q, d)
    }

    /// The share of held-out requests whose own tool ranks first in their batch.
    fn accuracy(w: &Matrix, held: &[&Vec<(usize, usize)>], vectors: &[Vec<f32>]) -> f64 {
        let (mut first, mut total) = (0, 0);
        for batch in held {
            let (q, d) = gather(batch, vectors);
            first += step(w, &q, &d, None);
            total += batch.len();
        }
        first as f64 / total.max(1) as f64
    }

    /// One seed's map: one pass of Adam over nine tenths of the batches, in the seed's order.
    fn train_one(seed: u64, batches: &[Vec<(usize, usize)>], vectors: &[Vec<f32>], lr: f64) -> Matrix {
        let n = vectors[0].len();
        let mut order: Vec<usize> = (0..batches.len()).collect();
        fastrand::Rng::with_seed(seed).shuffle(&mut order);
        let held_out = batches.len() / 10;
        let held: Vec<&Vec<(usize, usize)>> = order[..held_out].iter().map(|&i| &batches[i]).collect();
        let mut w = Matrix::identity(n);
        let before = accuracy(&w, &held, vectors);
        let (mut m, mut v) = (vec![0.0; n * n], vec![0.0; n * n]);
        for (t, &i) in order[held_out..].iter().enumerate() {
            let (q, d) = gather(&batches[i], vectors);
            let mut grad = Matrix::zeros(n, n);
            step(&w, &q, &d, Some(&mut grad));
            let t = (t + 1) as i32;
            let (c1, c2) = (1.0 - 0.9f64.powi(t), 1.0 - 0.999f64.powi(t));
            for k in 0..n * n {
                let g = grad.data[k];
                m[k] = 0.9 * m[k] + 0.1 * g;
                v[k] = 0.999 * v[k] + 0.001 * g * g;
                w.data[k] -= lr * (m[k] / c1) / ((v[k] / c2).sqrt() + 1e-8);
            }
        }
        let after = accuracy(&w, &held, vectors);
        eprintln!(
            "seed {seed}: {} batches, right tool first in its held-out batch {before:.3} -> {after:.3}",
            batches.len() - held_out
        );
        w
    }

    pub fn run() -> Result<(), String> {
        let options = options()?;
        let text = std::fs::read_to_string(&options.batches)
            .map_err(|e| format!("{}: {e}", options.batches.display()))?;
        let pairs: Vec<Vec<(String, String)>> =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", options.batches.display()))?;
        // Every text once: requests and tools apart (a model with prompts embeds them apart).
        let (mut requests, mut tools) = (HashMap::new(), HashMap::new());
        let batches: Vec<Vec<(usize, usize)>> = pairs
            .iter()
            .map(|batch| {
                batch
                    .iter()
                    .map(|(q, d)| {
                        let r = requests.len();
                        let r = *requests.entry(q.as_str()).or_insert(r);
                        let t = tools.len();
                        (r, *tools.entry(d.as_str()).or_insert(t))
                    })
                    .collect()
            })
            .filter(|batch: &Vec<(usize, usize)>| batch.len() > 1)
            .collect();
        let model = SentenceEmbedder::from_dir(&options.model)
            .and_then(|m| m.max_tokens(TRAINED_AT))
            .map_err(|e| e.to_string())?
            .no_query_adapter();
        fn texts<'a>(map: &HashMap<&'a str, usize>) -> Vec<&'a str> {
            let mut texts = vec![""; map.len()];
            map.iter().for_each(|(text, &i)| texts[i] = text);
            texts
        }
        let started = std::time::Instant::now();
        let mut vectors = model.embed_queries(&texts(&requests)).map_err(|e| e.to_string())?;
        let offset = vectors.len();
        vectors.extend(model.embed(&texts(&tools)).map_err(|e| e.to_string())?);
        eprintln!(
            "{} pairs in {} batches: {} texts embedded in {:.0} s",
            batches.iter().map(Vec::len).sum::<usize>(),
            batches.len(),
            vectors.len(),
            started.elapsed().as_secs_f64()
        );
        let batches: Vec<Vec<(usize, usize)>> =
            batches.into_iter().map(|b| b.into_iter().map(|(r, t)| (r, offset + t)).collect()).collect();

        let n = vectors[0].len();
        let mut sum = Matrix::zeros(n, n);
        for seed in 0..options.seeds {
            let w = train_one(seed, &batches, &vectors, options.lr);
            sum.data.iter_mut().zip(&w.data).for_each(|(s, x)| *s += x / options.seeds as f64);
        }

        let bytes: Vec<u8> = sum.data.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
        let weights = std::fs::read(options.model.join("model.safetensors")).map_err(|e| e.to_string())?;
        let digest: String = {
            use sha2::Digest;
            sha2::Sha256::digest(&weights).iter().map(|b| format!("{b:02x}")).collect()
        };
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![n, n], &bytes)
            .map_err(|e| e.to_string())?;
        // One key, so that the file is the same bit for bit from one run to the next.
        let metadata = HashMap::from([("base_model_sha256".to_owned(), digest)]);
        let file = safetensors::serialize([("weight", view)], Some(metadata)).map_err(|e| e.to_string())?;
        std::fs::write(&options.out, file).map_err(|e| format!("{}: {e}", options.out.display()))?;
        eprintln!("wrote {}", options.out.display());
        Ok(())
    }
}
