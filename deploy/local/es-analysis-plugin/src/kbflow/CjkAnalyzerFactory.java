package kbflow;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.cjk.CJKAnalyzer;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.AnalyzerFactory;

/** `cjk`: the same Lucene analyzer that a full Elasticsearch distribution registers as `cjk`. */
@NamedComponent("cjk")
public class CjkAnalyzerFactory implements AnalyzerFactory {
    @Override
    public Analyzer create() {
        return new CJKAnalyzer();
    }
}
