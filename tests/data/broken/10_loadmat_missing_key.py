# mistake: a MATLAB variable name that is not in the file
# expect: 'sig'
# expect: keys: 'signal', 'fs'
# expect: Did you mean: 'signal'?
# forbid: df.columns
# forbid: __header__
# fix: mat['sig'] => mat['signal']
mat = loadmat(srcpath('recording.mat'))
y = mat['sig'].ravel()
plt.plot(y)
plt.savefig(OUT)
