"""Writes the model-style corpus (tests/it/model_style.rs): scripts shaped as models write
them for a code interpreter, and their inputs. Run with the project's Python:
    .venv/bin/python tests/data/model_style/generate.py
Each script reads its data the way models do (a bare name, /mnt/data/<name>,
os.path.join, pathlib.Path, StringIO, np.load, scipy.io.loadmat, open), draws with pyplot, pandas or
seaborn, and ends the way models end (savefig under its own name and format, several
saves, /mnt/data paths, plt.show(), data files written, ace_tools). Seeded: plain Python
and pyward draw the same data."""

import itertools
import os

import numpy as np
import scipy.io

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, 'inputs')
SCRIPTS = os.path.join(HERE, 'scripts')


def write_inputs():
    os.makedirs(INPUTS, exist_ok=True)
    rng = np.random.default_rng(7)
    months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
    with open(os.path.join(INPUTS, 'sales.csv'), 'w') as f:
        f.write('month,region,sales,units\n')
        for i, m in enumerate(months):
            for region in ('North', 'South', 'West'):
                f.write(f'{m},{region},{100 + 10 * i + rng.integers(0, 40)},{rng.integers(5, 50)}\n')
    with open(os.path.join(INPUTS, 'temps.csv'), 'w') as f:
        f.write('date,city,temp\n')
        for d in range(30):
            for city in ('Oslo', 'Rome'):
                base = 4 if city == 'Oslo' else 18
                f.write(f'2024-03-{d + 1:02d},{city},{base + rng.normal(0, 2):.2f}\n')
    np.save(os.path.join(INPUTS, 'scan.npy'), rng.normal(size=(40, 60)).cumsum(axis=1))
    t = np.linspace(0, 1, 200)
    scipy.io.savemat(os.path.join(INPUTS, 'data.mat'),
                     {'signal': np.sin(2 * np.pi * 5 * t) + 0.1 * rng.normal(size=200), 't': t})
    with open(os.path.join(INPUTS, 'notes.txt'), 'w') as f:
        f.write('Quarterly sales review\nregion breakdown\n')
    np.savetxt(os.path.join(INPUTS, 'values.txt'), rng.normal(10, 3, size=120))


# How the data is read: (code, the frame's name, what it holds)
READS = {
    'bare': ("df = pd.read_csv('sales.csv')\n", 'sales'),
    'mnt': ("df = pd.read_csv('/mnt/data/sales.csv')\n", 'sales'),
    'join': ("import os\npath = os.path.join('/mnt/data', 'sales.csv')\ndf = pd.read_csv(path)\n", 'sales'),
    'exists': ("import os\nfile = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') "
               "else 'sales.csv'\ndf = pd.read_csv(file)\n", 'sales'),
    'stringio': ("from io import StringIO\ncsv = '''month,region,sales,units\nJan,North,120,10\n"
                 "Feb,North,135,12\nMar,North,150,9\nJan,South,90,14\nFeb,South,110,11\n"
                 "Mar,South,125,16\n'''\ndf = pd.read_csv(StringIO(csv))\n", 'sales'),
    'temps': ("df = pd.read_csv('/mnt/data/temps.csv', parse_dates=['date'])\n", 'temps'),
}

# What is drawn from the frame (pyplot and pandas).
PLOTS_SALES = {
    'bar': "totals = df.groupby('month', sort=False)['sales'].sum()\n"
           "fig, ax = plt.subplots(figsize=(8, 5))\n"
           "ax.bar(totals.index, totals.values, color='steelblue')\n"
           "ax.set_title('Total sales by month')\nax.set_xlabel('Month')\nax.set_ylabel('Sales')\n",
    'line': "pivot = df.pivot_table(index='month', columns='region', values='sales', sort=False)\n"
            "fig, ax = plt.subplots(figsize=(9, 5))\n"
            "for region in pivot.columns:\n    ax.plot(pivot.index, pivot[region], marker='o', label=region)\n"
            "ax.legend()\nax.grid(True, alpha=0.3)\nax.set_title('Sales by region')\n",
    'scatter': "fig, ax = plt.subplots()\n"
               "ax.scatter(df['units'], df['sales'], c=df['sales'], cmap='viridis', alpha=0.8)\n"
               "ax.set_xlabel('Units')\nax.set_ylabel('Sales')\nax.set_title('Units vs sales')\n",
    'pandas': "ax = df.groupby('region')['sales'].sum().plot(kind='bar', figsize=(6, 4), rot=0)\n"
              "ax.set_ylabel('Sales')\nfig = ax.figure\nplt.tight_layout()\n",
    'pie': "share = df.groupby('region')['sales'].sum()\n"
           "fig, ax = plt.subplots(figsize=(6, 6))\n"
           "ax.pie(share, labels=share.index, autopct='%1.1f%%', startangle=90)\n"
           "ax.set_title('Share of sales')\n",
    'hist': "fig, ax = plt.subplots()\nax.hist(df['sales'], bins=12, edgecolor='black')\n"
            "ax.set_title('Distribution of sales')\n",
    'box': "fig, ax = plt.subplots()\n"
           "df.boxplot(column='sales', by='region', ax=ax)\nplt.suptitle('')\nax.set_title('Sales by region')\n",
    'seaborn_bar': "import seaborn as sns\nsns.set_theme(style='whitegrid')\n"
                   "fig, ax = plt.subplots(figsize=(8, 4))\n"
                   "sns.barplot(data=df, x='month', y='sales', hue='region', ax=ax, errorbar=None)\n"
                   "ax.set_title('Monthly sales')\n",
    'seaborn_scatter': "import seaborn as sns\n"
                       "fig, ax = plt.subplots()\n"
                       "sns.scatterplot(data=df, x='units', y='sales', hue='region', ax=ax)\n",
    'seaborn_box': "import seaborn as sns\nfig, ax = plt.subplots()\n"
                   "sns.boxplot(data=df, x='region', y='sales', ax=ax)\n",
}
PLOTS_TEMPS = {
    'temps_line': "fig, ax = plt.subplots(figsize=(10, 4))\n"
                  "for city, g in df.groupby('city'):\n    ax.plot(g['date'], g['temp'], label=city)\n"
                  "ax.legend()\nfig.autofmt_xdate()\nax.set_ylabel('°C')\n",
    'temps_seaborn': "import seaborn as sns\nfig, ax = plt.subplots(figsize=(10, 4))\n"
                     "sns.lineplot(data=df, x='date', y='temp', hue='city', ax=ax)\nfig.autofmt_xdate()\n",
    'temps_hist': "import seaborn as sns\nfig, ax = plt.subplots()\n"
                  "sns.histplot(data=df, x='temp', hue='city', bins=15, ax=ax)\n",
}

# How the figure leaves: code using `fig`, and the names plain Python writes.
SAVES = {
    'plt_png': ("plt.savefig('novice.png')\n", ['novice.png']),
    'fig_png_dpi': ("fig.savefig('sales_chart.png', dpi=150, bbox_inches='tight')\n", ['sales_chart.png']),
    'mnt_png': ("plt.savefig('/mnt/data/plot.png')\n", ['plot.png']),
    'svg': ("plt.savefig('chart.svg')\n", ['chart.svg']),
    'pdf': ("fig.savefig('report.pdf')\n", ['report.pdf']),
    'jpg': ("plt.savefig('chart.jpg', dpi=80)\n", ['chart.jpg']),
    'two_formats': ("plt.savefig('figure.png')\nplt.savefig('figure.svg')\n", ['figure.png', 'figure.svg']),
    'tight': ("plt.tight_layout()\nplt.savefig('output.png', dpi=100)\nplt.close()\n", ['output.png']),
    'show': ("plt.show()\n", []),
    'save_show': ("plt.savefig('result.png')\nplt.show()\n", ['result.png']),
    'mnt_out': ("output_path = '/mnt/data/sales_by_month.png'\nplt.savefig(output_path)\n"
                "print(f'Saved to {output_path}')\n", ['sales_by_month.png']),
}

# Data files models write beside the figure.
WRITES = {
    'none': ("", []),
    'csv': ("df.describe().to_csv('summary.csv')\n", ['summary.csv']),
    'json': ("import json\nstats = {'rows': int(len(df)), 'columns': list(df.columns)}\n"
             "with open('stats.json', 'w') as f:\n    json.dump(stats, f, indent=2)\n", ['stats.json']),
    'txt': ("with open('/mnt/data/report.txt', 'w') as f:\n    f.write(df.head().to_string())\n", ['report.txt']),
    'csv_mnt': ("df.head(10).to_csv('/mnt/data/top10.csv', index=False)\n", ['top10.csv']),
}


def main_style(body):
    inner = ''.join('    ' + line + '\n' if line else '\n' for line in body.splitlines())
    return f"def main():\n{inner}\n\nif __name__ == '__main__':\n    main()\n"


def scripts():
    head = "import pandas as pd\nimport numpy as np\nimport matplotlib.pyplot as plt\n\n"
    out = []
    combos = itertools.cycle(itertools.product(SAVES, WRITES))
    rounds = [(read, r) for read in READS for r in range(1 if read in ('stringio', 'temps') else 2)]
    for read, r in rounds:
        read_code, kind = READS[read]
        plots = PLOTS_TEMPS if kind == 'temps' else PLOTS_SALES
        for plot, plot_code in plots.items():
            if read == 'stringio' and plot in ('seaborn_scatter',):
                continue
            save, write = next(combos)
            save_code, save_names = SAVES[save]
            write_code, write_names = WRITES[write]
            body = read_code + plot_code + write_code + save_code
            name = f'{read}_{plot}_{save}_{write}'
            if len(out) % 7 == 3:
                body = main_style(body)
                name += '_main'
            out.append((name, head + body, save_names + write_names))
    # Several figures, each saved.
    for n in (2, 3):
        body = "df = pd.read_csv('sales.csv')\n"
        names = []
        for i, region in enumerate(['North', 'South', 'West'][:n]):
            body += (f"fig{i}, ax{i} = plt.subplots()\nsub = df[df['region'] == '{region}']\n"
                     f"ax{i}.plot(sub['month'], sub['sales'])\nax{i}.set_title('{region}')\n"
                     f"fig{i}.savefig('out_{region.lower()}.png')\n")
            names.append(f'out_{region.lower()}.png')
        out.append((f'several_figures_{n}', head + body, names))
    # Several figures shown one after another.
    out.append(('several_shown', head + "df = pd.read_csv('/mnt/data/sales.csv')\n"
                "for region, g in df.groupby('region'):\n    plt.figure()\n"
                "    plt.plot(g['month'], g['sales'])\n    plt.title(region)\n    plt.show()\n", []))
    # A figure left open, nothing saved.
    out.append(('left_open', head + "df = pd.read_csv('sales.csv')\nplt.plot(df['sales'])\n"
                "plt.title('Sales')\n", []))
    # Arrays and matrices.
    out.append(('npy_imshow', head + "scan = np.load('scan.npy')\nplt.imshow(scan, cmap='magma', aspect='auto')\n"
                "plt.colorbar(label='value')\nplt.savefig('scan.png')\n", ['scan.png']))
    out.append(('npy_mnt_contour', head + "scan = np.load('/mnt/data/scan.npy')\nfig, ax = plt.subplots()\n"
                "cs = ax.contourf(scan, levels=12)\nfig.colorbar(cs)\nfig.savefig('/mnt/data/contour.png')\n",
                ['contour.png']))
    out.append(('mat_signal', head + "from scipy.io import loadmat\nm = loadmat('data.mat')\n"
                "t, s = m['t'].ravel(), m['signal'].ravel()\nplt.figure(figsize=(10, 3))\n"
                "plt.plot(t, s)\nplt.xlabel('t (s)')\nplt.savefig('signal.png')\n", ['signal.png']))
    out.append(('mat_mnt_spectrum', head + "import scipy.io\nm = scipy.io.loadmat('/mnt/data/data.mat')\n"
                "s = m['signal'].ravel()\nspec = np.abs(np.fft.rfft(s))\nplt.semilogy(spec)\n"
                "plt.title('Spectrum')\nplt.savefig('spectrum.svg')\n", ['spectrum.svg']))
    out.append(('loadtxt_hist', head + "values = np.loadtxt('values.txt')\nplt.hist(values, bins=20)\n"
                "plt.savefig('values_hist.png')\n", ['values_hist.png']))
    out.append(('loadtxt_mnt', head + "values = np.loadtxt('/mnt/data/values.txt')\n"
                "plt.plot(np.sort(values))\nplt.savefig('sorted.png')\n"
                "np.savetxt('sorted.txt', np.sort(values))\n", ['sorted.png', 'sorted.txt']))
    out.append(('open_notes', head + "with open('notes.txt') as f:\n    title = f.readline().strip()\n"
                "plt.bar(['a', 'b'], [3, 5])\nplt.title(title)\nplt.savefig('notes_chart.png')\n",
                ['notes_chart.png']))
    out.append(('open_mnt_notes', head + "text = open('/mnt/data/notes.txt').read()\n"
                "words = text.split()\nplt.barh(range(len(words)), [len(w) for w in words])\n"
                "plt.yticks(range(len(words)), words)\nplt.tight_layout()\nplt.savefig('words.png')\n",
                ['words.png']))
    out.append(('npy_save', head + "scan = np.load('scan.npy')\nnp.save('scan_mean.npy', scan.mean(axis=0))\n"
                "plt.plot(scan.mean(axis=0))\nplt.savefig('mean.png')\n", ['mean.png', 'scan_mean.npy']))
    out.append(('write_read_back', head + "df = pd.read_csv('sales.csv')\n"
                "df.groupby('region')['sales'].sum().to_csv('totals.csv')\n"
                "back = pd.read_csv('totals.csv')\nplt.bar(back['region'], back['sales'])\n"
                "plt.savefig('totals.png')\n", ['totals.csv', 'totals.png']))
    out.append(('subplots_grid', head + "df = pd.read_csv('/mnt/data/sales.csv')\n"
                "fig, axes = plt.subplots(2, 2, figsize=(10, 8))\n"
                "for ax, (region, g) in zip(axes.flat, df.groupby('region')):\n"
                "    ax.plot(g['month'], g['sales'])\n    ax.set_title(region)\n"
                "axes[1, 1].hist(df['units'])\nfig.suptitle('Overview')\nfig.tight_layout()\n"
                "fig.savefig('overview.png', dpi=120)\n", ['overview.png']))
    out.append(('no_extension', head + "x = np.linspace(0, 10, 100)\nplt.plot(x, np.sin(x))\n"
                "plt.savefig('sine')\n", ['sine.png']))
    out.append(('synthetic_seeded', head + "np.random.seed(42)\ndata = np.random.randn(500)\n"
                "plt.hist(data, bins=30, alpha=0.7)\nplt.axvline(data.mean(), color='r', linestyle='--')\n"
                "plt.savefig('hist.png')\n", ['hist.png']))
    out.append(('heatmap_corr', head + "import seaborn as sns\ndf = pd.read_csv('sales.csv')\n"
                "corr = df[['sales', 'units']].corr()\nsns.heatmap(corr, annot=True, cmap='coolwarm')\n"
                "plt.savefig('corr.png')\n", ['corr.png']))
    out.append(('colorsys_palette', head + "import colorsys\n"
                "colors = [colorsys.hsv_to_rgb(i / 6, 0.7, 0.9) for i in range(6)]\n"
                "plt.bar(range(6), range(1, 7), color=colors)\nplt.savefig('palette.png')\n", ['palette.png']))
    # pathlib as models write it: reads, saves and writes through Path objects.
    out.extend(pathlib_scripts(head))
    # ace_tools: plain Python has no such module (pyward provides it).
    out.append(('ace_tools_table', head + "import ace_tools as tools\ndf = pd.read_csv('/mnt/data/sales.csv')\n"
                "summary = df.groupby('region')['sales'].agg(['sum', 'mean']).reset_index()\n"
                "tools.display_dataframe_to_user(name='Sales summary', dataframe=summary)\n"
                "summary.plot(x='region', y='sum', kind='bar')\nplt.savefig('/mnt/data/summary.png')\n", None))
    out.append(('ace_tools_only', head + "import ace_tools\ndf = pd.read_csv('sales.csv')\n"
                "ace_tools.display_dataframe_to_user('First rows', df.head())\n", None))
    # Removed APIs: plain Python fails too (feedback names the replacement).
    out.append(('removed_get_cmap', head + "from matplotlib.cm import get_cmap\ncmap = get_cmap('viridis')\n"
                "plt.scatter([1, 2, 3], [3, 1, 2], c=[0.1, 0.5, 0.9], cmap=cmap)\nplt.savefig('cmap.png')\n", None))
    out.append(('removed_style_seaborn', head + "plt.style.use('seaborn')\nplt.plot([1, 2, 3])\n"
                "plt.savefig('styled.png')\n", None))
    out.append(('removed_np_float', head + "x = np.arange(5).astype(np.float)\nplt.plot(x)\n"
                "plt.savefig('float.png')\n", None))
    return out


def pathlib_scripts(head):
    """Scripts that read, save and write through `pathlib.Path` (issue 38)."""
    head += "from pathlib import Path\n"
    bar = ("totals = df.groupby('month', sort=False)['sales'].sum()\n"
           "fig, ax = plt.subplots(figsize=(8, 5))\nax.bar(totals.index, totals.values)\n"
           "ax.set_title('Total sales by month')\n")
    return [
        ('path_mnt_dir_bar', head + "DATA_DIR = Path('/mnt/data')\n"
         "df = pd.read_csv(DATA_DIR / 'sales.csv')\n" + bar +
         "output_path = DATA_DIR / 'path_bar.png'\nplt.savefig(output_path)\n"
         "print(f'Saved to {output_path.name}')\n", ['path_bar.png']),
        ('path_bare_line_csv', head + "df = pd.read_csv(Path('sales.csv'))\n"
         "pivot = df.pivot_table(index='month', columns='region', values='sales', sort=False)\n"
         "fig, ax = plt.subplots()\npivot.plot(ax=ax, marker='o')\n"
         "fig.savefig(Path('path_line.png'), dpi=100)\n"
         "df.describe().to_csv(Path('path_summary.csv'))\n",
         ['path_line.png', 'path_summary.csv']),
        ('path_exists_fallback', head + "data_dir = Path('/mnt/data') if Path('/mnt/data').exists() "
         "else Path('.')\ncsv_path = data_dir / 'temps.csv'\nif not csv_path.is_file():\n"
         "    raise FileNotFoundError(csv_path)\n"
         "df = pd.read_csv(csv_path, parse_dates=['date'])\n"
         "print(csv_path.name, csv_path.stem, csv_path.suffix, csv_path.parent == data_dir)\n"
         "fig, ax = plt.subplots(figsize=(10, 4))\n"
         "for city, g in df.groupby('city'):\n    ax.plot(g['date'], g['temp'], label=city)\n"
         "ax.legend()\nfig.autofmt_xdate()\n"
         "fig.savefig(data_dir / f'{csv_path.stem}_plot.png')\n", ['temps_plot.png']),
        ('path_glob_inputs', head + "files = sorted(Path('/mnt/data').glob('*.csv'))\n"
         "print([f.name for f in files])\nframes = {f.stem: pd.read_csv(f) for f in files}\n"
         "fig, axes = plt.subplots(1, len(frames), figsize=(10, 4))\n"
         "for ax, (name, frame) in zip(axes, frames.items()):\n"
         "    ax.hist(frame.select_dtypes('number').iloc[:, -1], bins=10)\n"
         "    ax.set_title(name)\nfig.savefig('inputs_overview.png')\n",
         ['inputs_overview.png']),
        ('path_read_write_text', head + "notes = Path('notes.txt').read_text()\n"
         "title = notes.splitlines()[0]\nplt.bar(['a', 'b', 'c'], [3, 5, 4])\nplt.title(title)\n"
         "plt.savefig(Path('notes_title.png'))\n"
         "Path('/mnt/data/word_count.txt').write_text(f'{len(notes.split())} words\\n')\n",
         ['notes_title.png', 'word_count.txt']),
        ('path_mkdir_json', head + "import json\nout_dir = Path('/mnt/data')\n"
         "out_dir.mkdir(parents=True, exist_ok=True)\ndf = pd.read_csv(out_dir / 'sales.csv')\n"
         "share = df.groupby('region')['sales'].sum()\nfig, ax = plt.subplots(figsize=(6, 6))\n"
         "ax.pie(share, labels=share.index, autopct='%1.1f%%')\n"
         "fig.savefig(out_dir / 'mkdir_pie.png')\n"
         "with open(out_dir / 'share.json', 'w') as f:\n"
         "    json.dump({k: int(v) for k, v in share.items()}, f, indent=2)\n",
         ['mkdir_pie.png', 'share.json']),
        ('path_arrays', head + "from scipy.io import loadmat\nbase = Path('/mnt/data')\n"
         "scan = np.load(base / 'scan.npy')\nm = loadmat(Path('data.mat'))\n"
         "values = np.loadtxt(base / 'values.txt')\nfig, axes = plt.subplots(1, 3, figsize=(12, 4))\n"
         "axes[0].imshow(scan, aspect='auto')\naxes[1].plot(m['t'].ravel(), m['signal'].ravel())\n"
         "axes[2].hist(values, bins=15)\nfig.tight_layout()\nfig.savefig(Path('arrays.png'))\n",
         ['arrays.png']),
        ('path_bytes_copy', head + "raw = Path('sales.csv').read_bytes()\n"
         "print(len(raw), Path('sales.csv').stat().st_size)\n"
         "Path('sales_copy.csv').write_bytes(raw)\ndf = pd.read_csv(Path('sales_copy.csv'))\n"
         "plt.scatter(df['units'], df['sales'])\nplt.savefig('copy_scatter.png')\n",
         ['sales_copy.csv', 'copy_scatter.png']),
        ('path_module_cwd', head.replace("from pathlib import Path\n", "import pathlib\n") +
         "base = pathlib.Path.cwd()\ndf = pd.read_csv(base / 'sales.csv')\n"
         "df.groupby('region')['units'].sum().plot(kind='barh')\nplt.tight_layout()\n"
         "plt.savefig(pathlib.Path('units_by_region.png'))\n", ['units_by_region.png']),
        ('path_seaborn_suffix', head + "import seaborn as sns\n"
         "src = Path('/mnt/data/sales.csv')\ndf = pd.read_csv(src)\n"
         "sns.boxplot(data=df, x='region', y='sales')\n"
         "plt.savefig(src.with_suffix('.png').name)\n"
         "df.head().to_csv(src.with_name('head.csv'), index=False)\n",
         ['sales.png', 'head.csv']),
        ('path_main_resolve', head + "def main():\n"
         "    here = Path('.').resolve()\n    df = pd.read_csv(here / 'sales.csv')\n"
         "    plt.plot(df['sales'].rolling(3).mean())\n"
         "    target = Path('rolling.png')\n    plt.savefig(target)\n"
         "    print('exists:', target.exists(), target.suffix)\n\n\n"
         "if __name__ == '__main__':\n    main()\n", ['rolling.png']),
        ('path_iterdir_npy', head + "for entry in sorted(Path('/mnt/data').iterdir()):\n"
         "    if entry.suffix == '.npy':\n        arr = np.load(entry)\n"
         "        plt.contourf(arr, levels=10)\n        plt.title(entry.stem)\n"
         "plt.savefig('from_iterdir.png')\n", ['from_iterdir.png']),
    ]


def write_scripts():
    os.makedirs(SCRIPTS, exist_ok=True)
    for old in os.listdir(SCRIPTS):
        os.remove(os.path.join(SCRIPTS, old))
    listing = []
    for name, code, names in scripts():
        with open(os.path.join(SCRIPTS, name + '.py'), 'w') as f:
            f.write(code)
        listing.append(f"{name}.py\t{'?' if names is None else ' '.join(sorted(names))}")
    with open(os.path.join(HERE, 'expected.tsv'), 'w') as f:
        f.write('# script\tartifact names plain Python writes (? : plain Python cannot run it)\n')
        f.write('\n'.join(listing) + '\n')
    return len(listing)


if __name__ == '__main__':
    write_inputs()
    print(write_scripts(), 'scripts')
